package classify

import "math/bits"

// Code is a finding's stable name, used by filters, check and tests.
type Code uint8

// Frame findings: raised by Classify from one frame alone.
const (
	CodeNotJSON Code = iota + 1
	CodeBlankLine
	CodeBadHeader
	CodeNonObject
	CodeBatch
	CodeEmptyBatch
	CodeStrayObject
	CodeBadMethod
	CodeBadID
	CodeBadJSONRPC
	CodeBadParams
	CodeNullID
	CodeFractionalID
	CodeUnsafeIntID
	CodeReservedMethod
	CodeResultAndError
	CodeNoResultOrError
	CodeBadErrorObject
	CodeNullIDError
	CodeMissingIDError
	CodeResultWithoutID
	CodeDuplicateMember
	CodeOpaqueError
	CodeLeakyError
	CodeRedacted
	CodeUnsafeText
	CodeOversize
	CodeNotificationAsRequest
	CodeRequestAsNotification

	// Session findings: raised by a Tracker from a frame's history.
	CodeUnmatchedResponse
	CodeDuplicateResponse
	CodeLateResponse
	CodeErrorNamesNoRequest
	CodeIDReused
	CodeTimeout
	CodeUnansweredAtEnd
	CodeCancelled
	CodeBeforeInitialize
	CodeUnansweredInvalid
	// CodeUntracked says the tracker's in-flight table was full and it
	// stopped following this request, so its answer can no longer be paired.
	CodeUntracked
	// CodeFramesMissing marks a gap in the record (frames the session
	// file could not hold), and the frames it leaves unjudged: a request
	// whose answer may be among them, a response whose request may be.
	CodeFramesMissing

	// The rules above the envelope (MCP revisions, LSP lifecycle and
	// capabilities): raised by a Tracker.
	CodeRemovedMethod
	CodeMethodNotInRevision
	CodeMissingMeta
	CodeMissingResultType
	CodeMissingCacheHints
	CodeUnsupportedVersion
	CodeCapabilityNotAdvertised
	CodeLogWithoutLevel
	CodeDeprecatedFeature
	CodeUnknownTool
	CodeToolError
	CodeToolArgumentsInvalid
	CodeToolResultInvalid
	CodeBadToolSchema
	CodeToolDrift
	CodeProgressUnknownToken
	CodeProgressNotIncreasing
	CodeCancelUnknown
	CodeAfterShutdown
	CodeExitWithoutShutdown
	CodeUnknownDocument
	CodeMRTRMismatch

	// The transport rules of Streamable HTTP (http.go): raised by a
	// Tracker from the facts of Message.HTTP.
	CodeHTTPStatus
	CodeAuthChallenge
	CodeHeaderMismatch
	CodeMissingMCPHeaders
	CodeMissingProtocolVersionHeader
	CodeBadContentType
	CodeAcceptMissing
	CodeNotificationNotAccepted
	CodeSessionHeader
	CodeStreamBroken

	codeEnd
)

var codeNames = [...]string{
	CodeNotJSON:               "not-json",
	CodeBlankLine:             "blank-line",
	CodeBadHeader:             "bad-header",
	CodeNonObject:             "non-object",
	CodeBatch:                 "batch",
	CodeEmptyBatch:            "empty-batch",
	CodeStrayObject:           "stray-object",
	CodeBadMethod:             "bad-method",
	CodeBadID:                 "bad-id",
	CodeBadJSONRPC:            "bad-jsonrpc",
	CodeBadParams:             "bad-params",
	CodeNullID:                "null-id",
	CodeFractionalID:          "fractional-id",
	CodeUnsafeIntID:           "unsafe-int-id",
	CodeReservedMethod:        "reserved-method",
	CodeResultAndError:        "result-and-error",
	CodeNoResultOrError:       "no-result-or-error",
	CodeBadErrorObject:        "bad-error-object",
	CodeNullIDError:           "null-id-error",
	CodeMissingIDError:        "missing-id-error",
	CodeResultWithoutID:       "result-without-id",
	CodeDuplicateMember:       "duplicate-member",
	CodeOpaqueError:           "opaque-error",
	CodeLeakyError:            "leaky-error",
	CodeRedacted:              "redacted",
	CodeUnsafeText:            "unsafe-text",
	CodeOversize:              "oversize",
	CodeNotificationAsRequest: "notification-as-request",
	CodeRequestAsNotification: "request-as-notification",
	CodeUnmatchedResponse:     "unmatched-response",
	CodeDuplicateResponse:     "duplicate-response",
	CodeLateResponse:          "late-response",
	CodeErrorNamesNoRequest:   "error-names-no-request",
	CodeIDReused:              "id-reused",
	CodeTimeout:               "timeout",
	CodeUnansweredAtEnd:       "unanswered-at-end",
	CodeCancelled:             "cancelled",
	CodeBeforeInitialize:      "before-initialize",
	CodeUnansweredInvalid:     "unanswered-invalid",
	CodeUntracked:             "untracked",
	CodeFramesMissing:         "frames-missing",

	CodeRemovedMethod:           "removed-method",
	CodeMethodNotInRevision:     "method-not-in-revision",
	CodeMissingMeta:             "missing-meta",
	CodeMissingResultType:       "missing-result-type",
	CodeMissingCacheHints:       "missing-cache-hints",
	CodeUnsupportedVersion:      "unsupported-version",
	CodeCapabilityNotAdvertised: "capability-not-advertised",
	CodeLogWithoutLevel:         "log-without-level",
	CodeDeprecatedFeature:       "deprecated-feature",
	CodeUnknownTool:             "unknown-tool",
	CodeToolError:               "tool-error",
	CodeToolArgumentsInvalid:    "tool-arguments-invalid",
	CodeToolResultInvalid:       "tool-result-invalid",
	CodeBadToolSchema:           "bad-tool-schema",
	CodeToolDrift:               "tool-drift",
	CodeProgressUnknownToken:    "progress-unknown-token",
	CodeProgressNotIncreasing:   "progress-not-increasing",
	CodeCancelUnknown:           "cancel-unknown",
	CodeMRTRMismatch:            "mrtr-mismatch",
	CodeAfterShutdown:           "after-shutdown",
	CodeExitWithoutShutdown:     "exit-without-shutdown",
	CodeUnknownDocument:         "unknown-document",

	CodeHTTPStatus:                   "http-status",
	CodeAuthChallenge:                "auth-challenge",
	CodeHeaderMismatch:               "header-mismatch",
	CodeMissingMCPHeaders:            "missing-mcp-headers",
	CodeMissingProtocolVersionHeader: "missing-protocol-version-header",
	CodeBadContentType:               "bad-content-type",
	CodeAcceptMissing:                "accept-missing",
	CodeNotificationNotAccepted:      "notification-not-accepted",
	CodeSessionHeader:                "session-header",
	CodeStreamBroken:                 "stream-broken",
}

func (c Code) String() string {
	if int(c) < len(codeNames) && codeNames[c] != "" {
		return codeNames[c]
	}
	return "unknown"
}

// ParseCode reads a finding code's name as String writes it.
func ParseCode(s string) (Code, bool) {
	for c, name := range codeNames {
		if name != "" && name == s {
			return Code(c), true
		}
	}
	return 0, false
}

// Codes lists every finding code in order.
func Codes() []Code {
	out := make([]Code, 0, codeEnd-1)
	for c := Code(1); c < codeEnd; c++ {
		out = append(out, c)
	}
	return out
}

// A CodeSet is a set of finding codes, one bit a code. The zero value is
// the empty set; sets compare with ==.
type CodeSet struct{ w [2]uint64 }

// Has reports whether c is in the set.
func (s CodeSet) Has(c Code) bool { return int(c) < 128 && s.w[c/64]&(1<<(c%64)) != 0 }

// With returns the set with c added.
func (s CodeSet) With(c Code) CodeSet {
	if int(c) < 128 {
		s.w[c/64] |= 1 << (c % 64)
	}
	return s
}

// Union returns the codes of s and o.
func (s CodeSet) Union(o CodeSet) CodeSet {
	return CodeSet{[2]uint64{s.w[0] | o.w[0], s.w[1] | o.w[1]}}
}

// Intersects reports whether s and o have a code in common.
func (s CodeSet) Intersects(o CodeSet) bool { return s.w[0]&o.w[0] != 0 || s.w[1]&o.w[1] != 0 }

// Empty reports whether the set has no code.
func (s CodeSet) Empty() bool { return s.w[0] == 0 && s.w[1] == 0 }

// Not returns every code that is not in s.
func (s CodeSet) Not() CodeSet { return CodeSet{[2]uint64{^s.w[0], ^s.w[1]}} }

// Len is the number of codes in the set.
func (s CodeSet) Len() int { return bits.OnesCount64(s.w[0]) + bits.OnesCount64(s.w[1]) }

// Codes lists the set's codes in order.
func (s CodeSet) Codes() []Code {
	out := make([]Code, 0, s.Len())
	for i, w := range s.w {
		for w != 0 {
			c := bits.TrailingZeros64(w)
			out = append(out, Code(i*64+c))
			w &^= 1 << c
		}
	}
	return out
}
