// Package classify reads JSON-RPC envelopes: it decides what one frame is
// (request, response, notification, something invalid, not JSON at all),
// raises the findings a frame carries on its own, renders the answer a
// strict receiver owes, and, through a Tracker, pairs requests with their
// responses across a session.
//
// It is also the project's one framing room and JSON byte toolkit:
//
//   - Framing: a Splitter finds frame boundaries in a stream fed in
//     pieces (SplitAll, SplitOpen for whole or started streams); a
//     FrameReader reads whole frames from a reader; AppendFrame and a
//     FrameWriter give a body its framing for the wire.
//   - JSON bytes: AppendQuoted and AppendString quote (terminal-safe, as
//     the session file is written), AppendJSONString as classify's own
//     answers are; DecodeEscape, StringValue, Valid, SkipValue and Member
//     read; Indent and AppendPretty lay a value out a member a line,
//     with long values cut; AppendSafeJSON and Escape make finished text
//     safe to show.
//
// It opens no file, socket or process, and imports nothing else of the
// project; the framing readers and writers wrap the ones their caller
// hands them. The rules it implements are written down in the project's
// envelope design note, and, for the tracker's rules above the envelope
// (the MCP revision in force, the capabilities both sides declared, the
// LSP lifecycle), in its mcp-revisions design note; which method each MCP
// revision has is one table, revisions.go, written from the MCP
// specification's schema.
package classify
