package sessions

import "errors"

// ErrNoRecords is what check, diff and export return for input in which
// no line is a session header or record: an empty file, or one that is
// not a session (binary data, a plain JSON-RPC log). check's Report still
// says how many lines were skipped.
var ErrNoRecords = errors.New("no line is a session header or record")
