package tui

import (
	"time"

	"github.com/rpctap/rpctap/filter"
	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/source"
	"github.com/rpctap/rpctap/tap"
)

// The names the commands still use from before the record source had a
// room of its own (source); they go once the commands use source.

// Source is source.Source.
type Source = source.Source

// Records is source.Records.
type Records = source.Records

// OpenTarget is source.Open.
func OpenTarget(target string) (*Source, error) { return source.Open(target) }

// OpenTargetFollowing is source.OpenFollowing.
func OpenTargetFollowing(target string) (*Source, error) { return source.OpenFollowing(target) }

// OpenFile is source.OpenFile.
func OpenFile(path string, timeout time.Duration) (*Source, error) {
	return source.OpenFile(path, timeout)
}

// FilterFrame is source.FilterFrame.
func FilterFrame(e *sessions.Entry, payload func() []byte) *filter.Frame {
	return source.FilterFrame(e, payload)
}

// FilterCodes is source.FilterCodes.
func FilterCodes(e *sessions.Entry) uint64 { return source.FilterCodes(e) }

// FilterStatus is source.FilterStatus.
func FilterStatus(st sessions.Status) string { return source.FilterStatus(st) }

// OpenLive is source.OpenLive.
func OpenLive(info tap.Info, timeout time.Duration) (*Source, error) {
	return source.OpenLive(info, timeout)
}
