package export

import (
	"bufio"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"math/bits"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// The HTML export: one self-contained page (styles and script inline, no
// network), with search, collapsible pretty JSON, findings, the pairs
// with their latency, and a latency histogram. Everything from a peer is
// escaped for markup (after being masked and escaped for a terminal):
// no character XML 1.0 forbids is in the page, so that XML tools read it
// too. And
// the page's Content-Security-Policy lets only its own script and style
// run, by their hashes.

const htmlStyle = `body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:72rem;padding:1rem;color:#1b1f24;background:#fff}
code,pre{font:12.5px/1.4 ui-monospace,monospace}
h1{font-size:1.4rem}h2{font-size:1.15rem;margin-top:2rem}
table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #d0d7de;padding:.2rem .5rem;text-align:left}
td.n{text-align:right}
.rec{border-left:3px solid #d0d7de;margin:.4rem 0;padding:.1rem .6rem}
.rec.h2s{border-color:#0969da}.rec.s2h{border-color:#8250df}.rec.err{border-color:#9a6700}.rec.event{border-color:#6e7781}
.rec[hidden]{display:none}
summary{cursor:pointer}
pre{background:#f6f8fa;padding:.5rem;overflow-x:auto;white-space:pre-wrap;word-break:break-all}
.f{margin:.2rem 0 .2rem 1rem}.f.error{color:#cf222e}.f.warn{color:#9a6700}.f.info{color:#57606a}
.fold{background:#fff8c5;padding:.5rem}
#search{width:24rem;padding:.3rem}
svg text{font:11px sans-serif}
`

const htmlScript = `(function(){
var box=document.getElementById('search'),hits=document.getElementById('hits');
var recs=document.querySelectorAll('.rec');
box.addEventListener('input',function(){
var q=box.value.toLowerCase(),n=0;
for(var i=0;i<recs.length;i++){var r=recs[i],m=q===''||r.textContent.toLowerCase().indexOf(q)>=0;r.hidden=!m;if(m)n++;}
hits.textContent=q===''?'':n+' of '+recs.length+' records match';
});
})();
`

func cspHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// h escapes peer text for HTML: masked, escaped for a terminal (cut at
// max bytes), then escaped for markup (sessions.MarkupText).
func (s *exporter) h(t string, max int) string { return sessions.MarkupText(s.text(t, max)) }

func (s *exporter) html(out io.Writer) error {
	stats, err := s.stats()
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(out, 64<<10)
	name := s.h(s.sessionName(), 120)
	fmt.Fprintf(w, `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src %s; script-src %s">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>rpctap session %s</title>
<style>%s</style>
</head><body>
<h1>rpctap session <code>%s</code></h1>
`, cspHash(htmlStyle), cspHash(htmlScript), name, htmlStyle, name)
	s.htmlSummary(w)
	if len(stats) > 0 {
		fmt.Fprintf(w, "<h2>Methods</h2>\n<table><tr><th>method</th><th>requests</th><th>notifications</th><th>answered</th><th>errors</th><th>p50</th><th>p95</th><th>p99</th></tr>\n")
		for _, m := range stats {
			lat := "<td>–</td><td>–</td><td>–</td>"
			if m.Answered > 0 {
				lat = fmt.Sprintf(`<td class="n">%s</td><td class="n">%s</td><td class="n">%s</td>`, ms(m.P50), ms(m.P95), ms(m.P99))
			}
			fmt.Fprintf(w, `<tr><td><code>%s</code></td><td class="n">%s</td><td class="n">%d</td><td class="n">%d</td><td class="n">%d</td>%s</tr>`+"\n",
				s.h(m.Method, 120), m.requests(), m.Notifications, m.Answered, m.Errors, lat)
		}
		fmt.Fprintf(w, "</table>\n")
		s.htmlHistogram(w)
	}
	s.htmlPairs(w)
	fmt.Fprintf(w, "<h2>Transcript</h2>\n<p><input id=\"search\" type=\"search\" placeholder=\"Search the records shown\" aria-label=\"Search\"> <span id=\"hits\"></span></p>\n<div id=\"records\">\n")
	var b []byte
	err = s.walk(func(pos int, e *sessions.Entry, ev *sessions.Event) error {
		b = s.htmlRecord(b[:0], pos, e, ev)
		_, err := w.Write(b)
		return err
	}, func() error {
		frames, from, to := s.leftOut()
		_, err := fmt.Fprintf(w, "<p class=\"fold\">%s left out here (lines %d–%d of %d records): a page cannot show a session of any length; <code>rpctap export --format html --max-frames N</code> shows more.</p>\n",
			sessions.Count(frames, "frame"), from, to, s.counts.Entries)
		return err
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "</div>\n<script>%s</script>\n</body></html>\n", htmlScript)
	return w.Flush()
}

func (s *exporter) htmlSummary(w io.Writer) {
	c := s.counts
	fmt.Fprintf(w, "<table>\n")
	row := func(k, v string) { fmt.Fprintf(w, "<tr><th>%s</th><td>%s</td></tr>\n", k, v) }
	if s.opts.Source != "" {
		row("file", "<code>"+sessions.MarkupText(classify.EscapeString(s.opts.Source, 200))+"</code>")
	}
	if s.hasHdr {
		row("session", "<code>"+s.h(s.hdr.ID, 120)+"</code>")
		row("command", "<code>"+s.h(s.command(), 400)+"</code>")
		row("started", s.hdr.Started.UTC().Format("2006-01-02 15:04:05.000 UTC"))
	}
	row("profile", sessions.MarkupText(fmt.Sprintf("%s, framing %s", s.x.Profile(), classify.EscapeString(s.hdr.FramingOrDefault(), 20))))
	row("records", fmt.Sprintf("%d: %d host → server, %d server → host, %d stderr, %s", c.Entries, c.H2S, c.S2H, c.Err, sessions.Count(c.Events, "event")))
	row("findings", findingsSummary(c))
	if s.res.Folded() {
		row("shown", fmt.Sprintf("%d of %d records: the first and last of them (<code>--max-frames</code>)", s.res.Shown, s.res.Records))
	}
	fmt.Fprintf(w, "</table>\n")
}

// htmlHistogram draws the latency of every pair of the session, in
// buckets that double (1 µs, 2 µs, 4 µs, …), as an inline SVG.
func (s *exporter) htmlHistogram(w io.Writer) {
	var buckets [64]int
	lo, hi := 64, -1
	for _, p := range s.pairs.List() {
		us := max(p.Latency.Microseconds(), 1)
		k := bits.Len64(uint64(us)) - 1
		buckets[k]++
		lo, hi = min(lo, k), max(hi, k)
	}
	if hi < 0 {
		return
	}
	most := 0
	for k := lo; k <= hi; k++ {
		most = max(most, buckets[k])
	}
	const barW, height, top = 44, 120, 16
	width := (hi - lo + 1) * barW
	fmt.Fprintf(w, "<h2>Latency</h2>\n<svg id=\"histogram\" width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"latency histogram of %d pairs\">\n", width, height+top+30, len(s.pairs.List()))
	for k := lo; k <= hi; k++ {
		x := (k - lo) * barW
		h := 0
		if buckets[k] > 0 {
			h = max(1, buckets[k]*height/most)
		}
		from := time.Duration(1<<k) * time.Microsecond
		fmt.Fprintf(w, "<g><title>%s to %s: %d</title><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#0969da\"></rect>", ms(from), ms(2*from), buckets[k], x+2, top+height-h, barW-4, h)
		fmt.Fprintf(w, "<text x=\"%d\" y=\"%d\">%d</text><text x=\"%d\" y=\"%d\">%s</text></g>\n", x+2, top+height-h-3, buckets[k], x+2, top+height+14, shortDur(from))
	}
	fmt.Fprintf(w, "<text x=\"0\" y=\"%d\">from (each bar to twice its start)</text></svg>\n", top+height+28)
}

func shortDur(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	}
	return fmt.Sprintf("%ds", int(d.Seconds()))
}

// htmlPairs lists the pairs whose request is shown, with their latency.
func (s *exporter) htmlPairs(w io.Writer) {
	list := s.pairs.List()
	if len(list) == 0 {
		return
	}
	fmt.Fprintf(w, "<h2>Pairs</h2>\n<details open><summary>%s", sessions.Count(len(list), "answered request"))
	if s.res.Folded() {
		fmt.Fprintf(w, " (those whose request is shown are listed)")
	}
	fmt.Fprintf(w, "</summary>\n<table id=\"pairs\"><tr><th>request</th><th>answer</th><th>method</th><th>id</th><th>status</th><th>latency</th></tr>\n")
	for _, p := range list {
		i, ok := s.x.BySeq(p.Request)
		if !ok || s.folded(i) {
			continue
		}
		req := s.x.At(i)
		status := "ok"
		if p.Error { // the answering member's, when the answer is a batch
			status = "error"
		}
		answer := fmt.Sprintf("%d", p.Response)
		if j, ok := s.x.BySeq(p.Response); ok && !s.folded(j) {
			answer = fmt.Sprintf(`<a href="#line-%d">%d</a>`, p.Response, p.Response)
		}
		id := req.ID
		if req.Kind == classify.KindBatch {
			id = s.memberID(p)
		}
		fmt.Fprintf(w, "<tr><td><a href=\"#line-%d\">%d</a></td><td>%s</td><td><code>%s</code></td><td><code>%s</code></td><td>%s</td><td class=\"n\">%s</td></tr>\n",
			p.Request, p.Request, answer, s.h(p.Method, 120), s.h(id, 60), status, ms(p.Latency))
	}
	fmt.Fprintf(w, "</table></details>\n")
}

// memberID is the id of a batch member's pair, as its answer says it (an
// index keeps no member's id): the answer read back, "" when it cannot
// be.
func (s *exporter) memberID(p sessions.Pair) string {
	if p.Response != s.idsSeq { // the members of a batch share their answer: read once
		s.idsSeq, s.idsMsg = p.Response, classify.Message{}
		i, ok := s.x.BySeq(p.Response)
		if !ok {
			return ""
		}
		if s.ids == nil {
			s.ids = sessions.NewRecordReader(s.f)
		}
		ev, err := s.ids.Read(s.x.At(i))
		if err != nil {
			return ""
		}
		s.idsMsg = s.classify(ev)
	}
	m := s.idsMsg
	if m.Kind == classify.KindBatch {
		if p.Member < 0 || p.Member >= len(m.Members) {
			return ""
		}
		m = m.Members[p.Member]
	}
	if !m.HasID() {
		return ""
	}
	return m.ID().String()
}

func (s *exporter) folded(pos int) bool { return pos >= s.foldFrom && pos < s.foldTo }

func (s *exporter) htmlRecord(b []byte, pos int, e *sessions.Entry, ev *sessions.Event) []byte {
	class := "event"
	if e.IsFrame() {
		class = e.Dir.String()
	}
	b = fmt.Appendf(b, "<div class=\"rec %s\" id=\"line-%d\">", class, e.Seq)
	head := fmt.Sprintf("line %d · +%s · ", e.Seq, ms(time.Duration(e.T)*time.Microsecond))
	if !e.IsFrame() {
		b = sessions.AppendMarkup(b, head+s.eventText(ev), false)
		return append(b, "</div>\n"...)
	}
	title := string(s.appendFrameTitle(nil, e, ev, func(b []byte, t string) []byte { return classify.AppendEscaped(b, []byte(t), 120) }))
	b = append(b, "<details><summary>"...)
	b = sessions.AppendMarkup(b, head+title, false)
	b = append(b, "</summary><pre>"...)
	body, ok := []byte(nil), false
	if e.Dir != classify.Err {
		body, ok = s.prettyFrame(nil, e, ev.Frame)
	}
	if !ok {
		body = classify.AppendEscaped(nil, ev.Frame, 4*s.cuts.String)
	}
	b = sessions.AppendMarkup(b, string(body), false)
	b = append(b, "</pre></details>"...)
	if ev.Original != nil {
		// An edit: what came in, before the user's bytes went out.
		orig, _ := s.original(nil, ev.Original)
		b = append(b, "<details class=\"original\"><summary>the original, as it came in before the user's edit</summary><pre>"...)
		b = sessions.AppendMarkup(b, string(orig), false)
		b = append(b, "</pre></details>"...)
	}
	if e.Codes != 0 {
		for _, f := range s.findings(pos) {
			b = fmt.Appendf(b, "<div class=\"f %s\"><b>%s</b> <code>%s</code>: %s", f.Severity, f.Severity, f.Code, sessions.MarkupText(classify.EscapeString(f.Message, 0)))
			if f.Member >= 0 {
				b = fmt.Appendf(b, " (batch member %d)", f.Member)
			}
			if f.Related != 0 {
				b = fmt.Appendf(b, ` (see <a href="#line-%d">line %d</a>)`, f.Related, f.Related)
			}
			b = append(b, "</div>"...)
		}
	}
	return append(b, "</div>\n"...)
}
