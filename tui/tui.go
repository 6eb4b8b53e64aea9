// Package tui is rpctap's terminal UI: a Bubble Tea program that shows
// live taps and recorded sessions frame by frame.
package tui
