// Package classify reads JSON-RPC envelopes: it decides what one frame is
// (request, response, notification, something invalid, not JSON at all),
// raises the findings a frame carries on its own, renders the answer a
// strict receiver owes, and, through a Tracker, pairs requests with their
// responses across a session.
//
// It does no I/O and imports nothing else of the project; the rules it
// implements are written down in the project's envelope design note.
package classify
