// Package demo is rpctap demo's cast: a scripted host and an embedded
// server, strict or lenient, that talk through a real tap over real pipes.
// The host walks a scenario (a normal MCP or LSP session, then every edge
// case of the inject catalog and the envelope rules the catalog does not
// reach) and captions each step; the server answers as the envelope rules
// say a strict peer must (the answers classify computes), or ignores what
// it cannot read, as many real servers do.
package demo
