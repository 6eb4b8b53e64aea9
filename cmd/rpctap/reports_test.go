package main

import (
	"github.com/rpctap/rpctap/sessions/diff"
	"github.com/rpctap/rpctap/sessions/replay"
)

// The documents of the JSON reports, as the tests read them back.
type (
	diffJSON     = diff.JSON
	hostJSON     = replay.HostJSON
	hostJSONCall = replay.HostJSONCall
)
