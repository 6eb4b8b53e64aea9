package tap

import (
	"bufio"
	"fmt"
	"path/filepath"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// headerTimeout is the timeout the session header names: the tap's own,
// when it is not the default (0 names none).
func headerTimeout(d time.Duration) time.Duration {
	if d <= 0 || d == classify.DefaultTimeout {
		return 0
	}
	return d
}

// startRecorder opens the session file and starts the recorder. Without a
// file it still runs, for the tracker and live subscribers.
func (t *Tap) startRecorder(redact *sessions.Redactor) error {
	opts := t.opts
	t.argv, t.name = redact.MaskStrings(opts.Argv), redact.MaskString(opts.Name)
	t.hub = newHub(opts.Framing)
	// The tap follows at most 10,000 requests in flight: memory stays
	// small when a peer sends requests that are never answered.
	tr := classify.NewTracker(classify.TrackerOptions{Profile: opts.Profile, LSPFraming: opts.Framing == classify.FramingLSP, Timeout: opts.Timeout, MethodTimeouts: opts.MethodTimeouts, MaxInFlight: 10_000, MaxRemembered: 4096})
	t.rec = &recorder{stop: make(chan struct{}), started: now() - time.Since(t.started), limit: parseLimit,
		tracker: tr, redact: redact, hub: t.hub, warn: opts.Warn}
	if opts.Calls != nil {
		t.rec.calls = newCalls(opts.Calls, t.started)
	}
	// The file, the OTLP exporter and an intercept read from the start;
	// views, tails and injections begin the record when they come.
	t.rec.wanted.Store(opts.Record || opts.Calls != nil || opts.Intercept != "")
	// The header is encoded first, with no file yet (tee keeps it): a
	// header built here, with its id and start time, in this package's
	// format version, is never refused, and the file's own failures are
	// handled below like any other write's.
	w, err := sessions.NewWriter(tee{t.rec}, sessions.Header{ID: t.id, Started: t.started.UTC(), Argv: t.argv, Name: t.name,
		Framing: opts.Framing.String(), Profile: opts.Profile.String(), ParseLimit: parseLimit, Timeout: headerTimeout(opts.Timeout), Redact: redact.Names(), Transport: opts.Transport})
	if err != nil {
		panic("rpctap: the session header was refused: " + err.Error())
	}
	t.rec.w = w
	t.hub.header = append([]byte(nil), t.rec.last...)
	var ferr error
	if opts.Record {
		// Views elsewhere read the file by the path the tap announces,
		// and what the tap says of a file it was given (that it is
		// there already) names it the same way: neither depends on the
		// tap's working directory.
		given := opts.Path
		if given != "" {
			if abs, err := filepath.Abs(given); err == nil {
				given = abs
			}
		}
		path, auto, err := sessions.Place(given, t.started, t.name)
		if err != nil {
			ferr = fmt.Errorf("cannot record this session: %w", err)
		} else {
			open := createSessionFile
			if t.create != nil {
				open = func(p string, _ bool) (sessionFile, error) { return t.create(p) }
			}
			// A file that is there (the last launch's) is kept, and the
			// session is recorded all the same, beside it.
			f, path, sink, err := sessions.Create(sessions.NewFile[sessionFile]{Path: path, Auto: auto, ID: t.id, Started: t.started,
				Replace: opts.Overwrite, Open: open, Warn: opts.Warn,
				Unlisted: func(err error) {
					opts.Warn(fmt.Sprintf("rpctap ls may not list this session from another environment: %v", err))
				}})
			if err != nil {
				ferr = fmt.Errorf("cannot record this session: %w", err)
			} else {
				if !sink {
					// A sink (--record /dev/null) keeps nothing to read
					// back: views are served as by a tap with no file.
					t.path = path
					t.hub.path = path
					t.rec.spoolDir = filepath.Dir(path)
				}
				t.rec.file = f
				t.rec.bw = bufio.NewWriterSize(f, 256<<10)
				if _, err := t.rec.bw.Write(t.hub.header); err != nil {
					t.rec.lost(err) // traffic goes on; the file says what is missing
				}
			}
		}
	}
	t.hub.attached = t.rec.begin
	t.hub.settle = func() func() {
		t.rec.mu.Lock()
		t.rec.flush()
		return t.rec.mu.Unlock
	}
	t.hub.meter = newBusyMeter(func() time.Duration { return time.Duration(t.rec.in.waited.Load()) }, processSched)
	t.hub.clock = func() int64 { return int64((now() - t.rec.started) / time.Microsecond) }
	t.rec.seq = 1
	t.rec.flush()
	t.recDone = make(chan struct{})
	t.rec.start()
	t.mu.Lock()
	t.noting = t.rec
	t.mu.Unlock()
	go func() {
		t.rec.run()
		if t.rec.file != nil {
			if err := t.rec.file.Close(); err != nil {
				t.opts.Warn(fmt.Sprintf("cannot finish the session file: %v", err))
			}
		}
		// The last word on the file, when it lacks frames.
		if msg := t.rec.missingReport(t.path); msg != "" {
			t.opts.Warn(msg)
		}
		close(t.recDone)
	}()
	return ferr
}

// createSessionFile creates a new session file, only the user's to read;
// with overwrite, in place of one that is there.
func createSessionFile(path string, overwrite bool) (sessionFile, error) {
	f, err := sessions.CreateFile(path, overwrite)
	if err != nil {
		return nil, err
	}
	return f, nil
}
