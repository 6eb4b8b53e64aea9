package source

import (
	"errors"
	"time"

	"github.com/rpctap/rpctap/tap"
)

// ErrGone says the process that was to start the tap ended first.
var ErrGone = errors.New("the tap's starter ended before the tap came up")

// AttachWhenUp waits for the tap named target to serve its socket and
// attaches to it; it gives up when gone closes (ErrGone) or after 15 s.
func AttachWhenUp(target string, gone <-chan struct{}) (*Source, error) {
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if info, err := tap.FindTap(target); err == nil {
			return OpenLive(info, 0)
		}
		select {
		case <-gone:
			return nil, ErrGone
		case <-time.After(30 * time.Millisecond):
		}
	}
	return nil, errors.New("the tap did not come up within 15 s; is the host starting the server?")
}
