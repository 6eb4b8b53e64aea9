// Package export writes a session file in another format, as rpctap
// export does (File, Write): a Markdown transcript, a Mermaid
// sequenceDiagram, one self-contained HTML page, JSON of the pairs with
// their latency, HAR 1.2, and OTLP JSON lines (spans built by the span
// model in sessions, which rpctap's live OTLP export shares). Every format
// masks the secrets its Redactor knows and escapes peer text; those that
// show the session record by record can leave its middle out
// (Options.MaxFrames).
package export

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// A Format is a kind of export of a session.
type Format int

// The export formats.
const (
	FormatMarkdown Format = iota + 1 // a transcript for issues and PRs
	FormatMermaid                    // a sequenceDiagram, folded
	FormatHTML                       // one self-contained page, folded
	FormatJSON                       // pairs, findings and per-method latency
	FormatHAR                        // HAR 1.2, an entry per pair
	FormatOTLP                       // OTLP JSON lines, a span per pair
)

var formatNames = [...]string{"", "markdown", "mermaid", "html", "json", "har", "otlp"}

// FormatNames lists the formats by name, for help and errors.
const FormatNames = "markdown, mermaid, html, json, har or otlp"

func (f Format) String() string {
	if f > 0 && int(f) < len(formatNames) {
		return formatNames[f]
	}
	return "unknown"
}

// Extension is the usual file name extension of the format.
func (f Format) Extension() string {
	switch f {
	case FormatMarkdown:
		return "md"
	case FormatMermaid:
		return "mmd"
	case FormatOTLP:
		return "otlp.jsonl"
	}
	return f.String()
}

// ParseFormat reads a format's name ("md" is markdown too).
func ParseFormat(s string) (Format, error) {
	if s == "md" {
		return FormatMarkdown, nil
	}
	for i, n := range formatNames {
		if i > 0 && n == s {
			return Format(i), nil
		}
	}
	return 0, fmt.Errorf("unknown export format %q: use %s", s, FormatNames)
}

// DefaultMaxFrames is how many records a format shows of a session unless
// told otherwise: the formats a reader takes in whole (a diagram, a page)
// cannot stream, so they fold a long session; the others show all of it
// (0).
func (f Format) DefaultMaxFrames() int {
	switch f {
	case FormatMermaid:
		return 200
	case FormatHTML:
		return 2000
	}
	return 0
}

// Folds reports whether the format may leave records out (--max-frames):
// those that show the session record by record.
func (f Format) Folds() bool {
	return f == FormatMarkdown || f == FormatMermaid || f == FormatHTML
}

// Options configure an export.
type Options struct {
	Format Format
	// MaxFrames is how many records a folding format shows (the first
	// and last half of them), with a note of how many were left out in
	// between: 0 means the format's default, negative means all.
	MaxFrames int
	// Redactor masks secrets in everything taken from the session (nil:
	// nothing more is masked than the recording's own redaction).
	Redactor *sessions.Redactor
	// Profile, Timeout and MethodTimeouts judge the session as check does.
	Profile        classify.Profile
	Timeout        time.Duration
	MethodTimeouts map[string]time.Duration
	// Baseline, when not nil, gives the baseline accepted for an MCP
	// server by its name (see classify.TrackerOptions.Baseline).
	Baseline func(server string) *classify.Baseline
	// Cuts bound long values in the text formats (zero: DefaultCuts).
	Cuts classify.Cuts
	// Source names the session file in the export (its path as given).
	Source string
	// Version is rpctap's version, for the HAR creator and OTLP scope.
	Version string
}

// DefaultCuts are the cuts of the text exports.
var DefaultCuts = classify.Cuts{String: 240, Elements: 100}

// An Result says what an export wrote.
type Result struct {
	// Records counts the session's records; Shown those the export
	// showed (fewer when it folded).
	Records, Shown int
	// Pairs counts request/response pairs (requests with no answer too)
	// the export wrote, for the formats made of pairs.
	Pairs int
	// Skipped counts the session file's lines that are no record (and
	// so in no export), SkippedBytes the bytes they held.
	Skipped      int
	SkippedBytes int64
}

// Folded reports whether records were left out.
func (r Result) Folded() bool { return r.Shown < r.Records }

// ErrSameFile is returned by File asked to write over its input.
var ErrSameFile = errors.New("the output is the session file itself")

// File exports the session file at path to out, through a temporary
// file in out's directory renamed over out once complete, so that out is
// never left half written; out "" or "-" writes to stdout instead. It
// never writes over the session file, and the export is readable by no
// one who cannot read the session file (it takes the file's permissions,
// 0600 for a session rpctap recorded).
func File(path, out string, stdout io.Writer, opts Options) (Result, error) {
	if out == "" || out == "-" {
		bw := bufio.NewWriterSize(stdout, 1<<20)
		res, err := Write(bw, path, opts)
		if ferr := bw.Flush(); err == nil && ferr != nil {
			err = fmt.Errorf("writing the export: %w", ferr)
		}
		return res, err
	}
	in, err := os.Stat(path)
	if err != nil {
		return Result{}, err
	}
	if same, err := sameFile(in, out); err != nil {
		return Result{}, err
	} else if same {
		return Result{}, ErrSameFile
	}
	if err := outputPlace(out, opts.Format); err != nil {
		return Result{}, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".*.tmp")
	if err != nil {
		return Result{}, fmt.Errorf("cannot write the export next to %s: %w", out, err)
	}
	defer os.Remove(tmp.Name()) // after the rename, there is nothing to remove
	bw := bufio.NewWriterSize(tmp, 1<<20)
	res, err := Write(bw, path, opts)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = tmp.Chmod(in.Mode().Perm() & 0o666)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), out)
	}
	if err != nil {
		return res, fmt.Errorf("writing the export to %s: %w", out, err)
	}
	return res, nil
}

// outputPlace checks, before anything is written, that out can be
// written: its directory exists, and it is not itself a directory. Its
// errors say what to do, and are not about the session file.
func outputPlace(out string, f Format) error {
	q := func(p string) string { return classify.EscapeString(p, 200) }
	dir := filepath.Dir(out)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("there is no directory %s to write %s in: make it first (mkdir -p %s), or give -o a path in one that exists", q(dir), q(out), q(dir))
	}
	if st, err := os.Stat(out); err == nil && st.IsDir() {
		return fmt.Errorf("-o %s is a directory: give a file in it (-o %s)", q(out), q(filepath.Join(out, "session."+f.Extension())))
	}
	return nil
}

// sameFile reports whether out names the file in (by inode, so a link or
// another spelling of the path counts).
func sameFile(in os.FileInfo, out string) (bool, error) {
	o, err := os.Stat(out)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return os.SameFile(in, o), nil
}

// Write writes the session file at path to w in opts.Format. It reads
// the file twice, streaming: first into a sessions.Index (an entry a
// record, no payloads) and the session's pairs, then record by record to
// write them, reading a pair's answer back by its offset. Memory grows
// with the number of records (about a hundred bytes each), never with
// their size.
func Write(w io.Writer, path string, opts Options) (Result, error) {
	s, err := openExport(path, opts)
	if err != nil {
		return Result{}, err
	}
	defer s.f.Close()
	switch opts.Format {
	case FormatMarkdown:
		err = s.markdown(w)
	case FormatMermaid:
		err = s.mermaid(w)
	case FormatHTML:
		err = s.html(w)
	case FormatJSON:
		err = s.jsonDoc(w)
	case FormatHAR:
		err = s.har(w)
	case FormatOTLP:
		err = s.otlp(w)
	default:
		err = fmt.Errorf("unknown export format: use %s", FormatNames)
	}
	return s.res, err
}

// exporter is one export under way.
type exporter struct {
	opts   Options
	f      *os.File
	x      *sessions.Index
	pairs  sessions.Pairs
	hdr    sessions.Header
	hasHdr bool
	counts sessions.Counts
	red    *sessions.Redactor
	cuts   classify.Cuts
	res    Result
	// fold: records at positions [foldFrom, foldTo) are left out.
	foldFrom, foldTo int
	recs, back       *sessions.RecordReader // records in order; answers
	ids              *sessions.RecordReader // batch answers, for their members' ids (HTML)
	idsSeq           int64                  // the line ids read last, its frame classified in idsMsg
	idsMsg           classify.Message
	buf, body        []byte // scratch of prettyFrame and mdRecord
	masked           bool   // the export's masking changed the frame walk gives fn
	// Scratch of eachPair and the OTLP export, reused pair to pair.
	reqMsg classify.Message
	pair   exportPair
	span   sessions.Span
}

func openExport(path string, opts Options) (*exporter, error) {
	s := &exporter{opts: opts, red: opts.Redactor, cuts: opts.Cuts}
	if s.cuts == (classify.Cuts{}) {
		s.cuts = DefaultCuts
	}
	iopts := s.pairs.CollectPairs(sessions.IndexOptions{Profile: opts.Profile, Timeout: opts.Timeout, MethodTimeouts: opts.MethodTimeouts, Baseline: opts.Baseline})
	x, err := sessions.IndexFile(path, iopts, nil)
	if err != nil {
		return nil, err // it says "reading the session file"
	}
	s.x = x
	s.hdr, s.hasHdr = x.Header()
	s.counts = x.Counts()
	if s.counts.Entries == 0 && !s.hasHdr {
		return nil, sessions.ErrNoRecords
	}
	if s.f, err = os.Open(path); err != nil {
		return nil, fmt.Errorf("reading the session file: %w", err)
	}
	// Both are read in walkEntries' reading goroutine: recs the records
	// in order, back the answers.
	s.recs, s.back = sessions.NewRecordReader(s.f), sessions.NewRecordReader(s.f)
	s.back.LookIn(s.recs) // an answer close after its request is read with it
	s.pairs.List()        // sorted now, read by both goroutines from here on
	s.res.Records = s.counts.Entries
	s.res.Skipped, s.res.SkippedBytes = s.counts.Skipped, s.counts.SkippedBytes
	s.foldFrom, s.foldTo = s.counts.Entries, s.counts.Entries
	max := opts.MaxFrames
	if max == 0 {
		max = opts.Format.DefaultMaxFrames()
	}
	if opts.Format.Folds() && max > 0 && s.counts.Entries > max {
		s.foldFrom = (max + 1) / 2
		s.foldTo = s.counts.Entries - max/2
	}
	s.res.Shown = s.counts.Entries - (s.foldTo - s.foldFrom)
	return s, nil
}
