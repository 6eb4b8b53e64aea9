package export

import (
	"fmt"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// walk calls fn with each record of the session in order, with its index
// entry and position, masked. Records in the fold are not read: fold is
// called once in their place (when not nil). With frames false, only the
// frame records that hold requests are read (and given to fn).
func (s *exporter) walk(fn func(pos int, e *sessions.Entry, ev *sessions.Event) error, fold func() error) error {
	return s.walkEntries(true, func(it *walkItem, _ []walkItem) error { return fn(it.pos, &it.e, &it.ev) }, fold)
}

// walkEntries is walk, or with all false, a walk of the requests alone,
// each with the answers of its pairs (read ahead too), in pair order.
func (s *exporter) walkEntries(all bool, fn func(it *walkItem, answers []walkItem) error, fold func() error) error {
	// Two goroutines: this one reads and masks the records, a batch at a
	// time, a batch or two ahead of the caller's fn, which formats them.
	full, free := make(chan *walkBatch, 2), make(chan *walkBatch, 3)
	for range 3 {
		free <- &walkBatch{}
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		defer close(full)
		s.readBatches(all, full, free, done)
	}()
	for b := range full {
		for i := range b.items {
			b.items[i].ev.Frame, b.items[i].ev.Header = b.data[b.items[i].frame[0]:b.items[i].frame[1]], nil
			if h := b.items[i].header; h[1] > h[0] {
				b.items[i].ev.Header = b.data[h[0]:h[1]]
			}
			if o := b.items[i].original; b.items[i].ev.Original != nil {
				b.items[i].ev.Original = b.data[o[0]:o[1]]
			}
			if h := b.items[i].http; b.items[i].ev.HTTP != nil {
				b.items[i].ev.HTTP = b.data[h[0]:h[1]]
			}
		}
		for i := 0; i < len(b.items); i++ {
			it := &b.items[i]
			if it.fold {
				if fold != nil {
					if err := fold(); err != nil {
						return err
					}
				}
				continue
			}
			k := i + 1
			for k < len(b.items) && b.items[k].answer {
				k++
			}
			s.masked = it.masked
			if err := fn(it, b.items[i+1:k]); err != nil {
				return err
			}
			i = k - 1
		}
		if b.err != nil {
			return b.err
		}
		free <- b
	}
	return nil
}

// A walkBatch is records read ahead, their bytes in data.
type walkBatch struct {
	items []walkItem
	data  []byte
	err   error
}

type walkItem struct {
	pos                     int
	e                       sessions.Entry
	ev                      sessions.Event
	frame, header, original [2]int // where ev's bytes are in data
	http                    [2]int // and its http object's
	fold                    bool   // the fold is here
	// answer marks the answer of a pair of the request before it, with
	// the pair's latency.
	answer  bool
	latency time.Duration
	masked  bool // the export's masking changed the frame
}

// maxKeptBatch is the most bytes a walkBatch keeps for its next records:
// a batch that held a huge frame gives that memory back, so that the
// batches in rotation do not each hold a huge frame's worth to the end.
const maxKeptBatch = 4 << 20

// reset empties the batch for its next records.
func (b *walkBatch) reset() {
	b.items, b.data, b.err = b.items[:0], b.data[:0], nil
	if cap(b.data) > maxKeptBatch {
		b.data = nil
	}
}

// add appends a record to the batch.
func (b *walkBatch) add(it walkItem) {
	it.frame[0] = len(b.data)
	b.data = append(b.data, it.ev.Frame...)
	it.frame[1] = len(b.data)
	it.header[0] = len(b.data)
	b.data = append(b.data, it.ev.Header...)
	it.header[1] = len(b.data)
	it.original[0] = len(b.data)
	b.data = append(b.data, it.ev.Original...) // an edit's: the reader reuses its bytes too
	it.original[1] = len(b.data)
	it.http[0] = len(b.data)
	b.data = append(b.data, it.ev.HTTP...)
	it.http[1] = len(b.data)
	b.items = append(b.items, it)
}

// readBatches reads the records walkEntries walks into batches.
func (s *exporter) readBatches(all bool, full chan<- *walkBatch, free <-chan *walkBatch, done <-chan struct{}) {
	n := s.counts.Entries
	var chunk []sessions.Entry
	base := 0
	list, pi := s.pairs.List(), 0 // the pairs, and the first of those not passed yet
	var b *walkBatch
	next := func() bool {
		select {
		case b = <-free:
			b.reset()
			return true
		case <-done:
			return false
		}
	}
	send := func() bool {
		select {
		case full <- b:
			b = nil
			return true
		case <-done:
			return false
		}
	}
	if !next() {
		return
	}
	for pos := 0; pos < n; pos++ {
		if pos == s.foldFrom && s.foldTo > s.foldFrom {
			b.items = append(b.items, walkItem{fold: true})
			pos = s.foldTo
			if pos >= n {
				break
			}
		}
		if pos < base || pos >= base+len(chunk) {
			base = pos
			chunk = s.x.Entries(chunk[:0], pos, pos+1024)
		}
		e := &chunk[pos-base]
		if !all && !(e.IsFrame() && (e.Kind == classify.KindRequest || e.Kind == classify.KindBatch)) {
			continue
		}
		ev, err := s.recs.Read(*e)
		if err != nil {
			b.err = fmt.Errorf("%w (did the session file change while it was exported?)", err)
			send()
			return
		}
		masked := s.mask(ev)
		b.add(walkItem{pos: pos, e: *e, ev: *ev, masked: masked})
		if !all {
			// The requests come in line order, as the pairs are sorted: a
			// cursor finds each one's pairs.
			for pi < len(list) && list[pi].Request < e.Seq {
				pi++
			}
			pe := pi
			for pe < len(list) && list[pe].Request == e.Seq {
				pe++
			}
			pairs := list[pi:pe]
			for k, pr := range pairs {
				if k > 0 && pairs[k-1].Response == pr.Response {
					continue // one answer to many members of a batch: read once, not once a member
				}
				ae, aev, err := s.response(pr.Response)
				if err != nil {
					b.err = err
					send()
					return
				}
				b.add(walkItem{e: ae, ev: *aev, answer: true, latency: pr.Latency})
			}
		}
		if len(b.items) >= 512 || len(b.data) >= 1<<20 {
			if !send() || !next() {
				return
			}
		}
	}
	if len(b.items) > 0 {
		send()
	}
}
