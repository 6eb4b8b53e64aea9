// Package playhost is rpctap as the host of a server that has none
// (rpctap watch -- SERVER with no --host): it writes the host's side of
// the conversation on the tap's host pipes, so that its frames are
// ordinary frames in the view and the session file, and the user drives
// the rest from the composer.
package playhost
