package main

import "github.com/rpctap/rpctap/sessions/diff"

// The documents of the JSON reports, as the tests read them back.
type diffJSON = diff.JSON
