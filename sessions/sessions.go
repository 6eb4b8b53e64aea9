// Package sessions owns rpctap's session file: a JSON Lines recording of
// every frame that crossed a tap, with its time and direction.
//
// The format (version 1) is written down in the project's architecture
// note. The first line is a header; each later line is one record, either a
// frame or an event (start, exit, gap, note):
//
//	{"rpctap":"session","version":1,"id":"…","started":"2026-11-29T18:42:00.123456Z","argv":["server"],"name":"server","framing":"ndjson","profile":"auto"}
//	{"t":1520,"dir":"h2s","frame":"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\"}"}
//	{"t":99000,"event":"exit","code":0}
//
// Frames are exact: a frame's bytes go in "frame" as a JSON string whose
// decoding is exactly those bytes, or, when they are not valid UTF-8, in
// "frame_b64" as standard base64. A header may add "parse_limit": how many
// bytes of a frame its writer judged by, when fewer than classify.MaxParse
// (a tap's recorder holds less); readers then judge larger frames from as
// many bytes, so that the file says what the live view said. It may add
// "timeout_ms", the pending-request timeout its writer judged by, when
// not the default; readers given no timeout judge by it too; and
// "redact", the names of the secrets masked in the frames.
//
// A Writer appends records without reflection and without allocating; a
// Reader decodes them with a hand-written scanner, skips and counts the
// lines it cannot read, and can follow a file that is still being written.
//
// Beside the format, sessions keeps the index of a session file
// (Index, IndexFile), where session files live and which are live
// (StateDir, LiveDir, RecentSessions), the redactor that masks secrets
// (Redactor), and what the jobs that read session files share: comparing
// messages structurally (Ignore, Change) and naming a request's call. The
// jobs are rooms of their own: sessions/check judges a file's findings,
// sessions/diff compares two files, sessions/export writes one in another
// format, and sessions/replay plays either side of one against a live peer.
package sessions
