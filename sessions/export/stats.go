package export

import (
	"fmt"
	"slices"
	"strconv"
	"time"
)

// MethodStats sum up one method's requests.
type MethodStats struct {
	Method string
	// Requests counts requests (batch members too); Notifications
	// counts notifications. Retries counts the requests among Requests
	// that retried a multi round-trip call: the call is one, answered
	// once, in as many requests as it took rounds.
	Requests, Notifications, Retries int
	// Answered counts requests that got an answer, Errors those whose
	// answer was an error.
	Answered, Errors int
	// P50, P95 and P99 are latency percentiles of the answered requests
	// (nearest rank); zero when none was answered.
	P50, P95, P99 time.Duration
	// Max is the longest latency.
	Max time.Duration
}

// methodStats counts requests and notifications per method and takes
// latency percentiles from pairs; isError says whether a pair's answer
// was an error. Methods come in order of their first request.
type statsBuilder struct {
	byName map[string]int
	stats  []MethodStats
	lat    [][]time.Duration
}

func (b *statsBuilder) of(method string) int {
	if b.byName == nil {
		b.byName = map[string]int{}
	}
	k, ok := b.byName[method]
	if !ok {
		k = len(b.stats)
		b.byName[method] = k
		b.stats = append(b.stats, MethodStats{Method: method})
		b.lat = append(b.lat, nil)
	}
	return k
}

func (b *statsBuilder) request(method string)      { b.stats[b.of(method)].Requests++ }
func (b *statsBuilder) notification(method string) { b.stats[b.of(method)].Notifications++ }

// retry counts a request that retried a call of method.
func (b *statsBuilder) retry(method string) { b.stats[b.of(method)].Retries++ }

func (b *statsBuilder) answer(method string, latency time.Duration, isError bool) {
	k := b.of(method)
	b.stats[k].Answered++
	if isError {
		b.stats[k].Errors++
	}
	b.lat[k] = append(b.lat[k], latency)
}

func (b *statsBuilder) done() []MethodStats {
	for k := range b.stats {
		l := b.lat[k]
		if len(l) == 0 {
			continue
		}
		slices.Sort(l)
		s := &b.stats[k]
		s.P50, s.P95, s.P99, s.Max = percentile(l, 50), percentile(l, 95), percentile(l, 99), l[len(l)-1]
	}
	return b.stats
}

// percentile is the nearest-rank percentile p of the sorted l.
// requests is how a summary table says m's requests: with the retries
// among them, so that a call of two rounds does not read as two calls,
// one of them unanswered.
func (m MethodStats) requests() string {
	switch m.Retries {
	case 0:
		return strconv.Itoa(m.Requests)
	case 1:
		return fmt.Sprintf("%d (1 retry)", m.Requests)
	}
	return fmt.Sprintf("%d (%d retries)", m.Requests, m.Retries)
}

func percentile(l []time.Duration, p int) time.Duration {
	rank := (p*len(l) + 99) / 100 // ceil(p/100 * n)
	return l[max(rank, 1)-1]
}
