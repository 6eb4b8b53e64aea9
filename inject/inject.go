// Package inject builds the frames a user sends into a live session: the
// edge-case catalog, templates (reply to a request, resend it, a request
// for each method and tool seen), ids for injected requests that do not
// collide with the side they impersonate, the raw escape syntax of the
// composer, and a preview of how the receiver reads a frame, through
// classify.
//
// It never writes to a pipe: the tap does (tap.Inject, over its socket).
// It has no terminal code.
package inject

import "github.com/rpctap/rpctap/classify"

// Either is the Dir of a catalog entry that makes sense in both
// directions.
const Either classify.Direction = 0
