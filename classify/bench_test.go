package classify

import (
	"strings"
	"testing"
)

// frame1KiB builds a realistic frame of about 1 KiB: an MCP tools/call
// request or its result, with ordinary text payload.
func frame1KiB(response bool) []byte {
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 20)[:880]
	if response {
		return []byte(`{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"` + text + `"}],"isError":false,"structuredContent":{"n":1.5e3,"ok":true,"none":null}}}`)
	}
	return []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"echo","arguments":{"message":"` + text + `","count":3,"flags":[true,false,null]},"_meta":{"progressToken":7}}}`)
}

func benchmarkClassify(b *testing.B, frame []byte, dir Direction) {
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		m := Classify(frame, dir, MCP)
		if m.Kind == KindNotJSON {
			b.Fatal("frame did not parse")
		}
	}
}

// codeFrame1KiB is a tools/call request whose argument is source code: as
// dense in escapes (\n, \t, \") as MCP traffic that edits files.
func codeFrame1KiB() []byte {
	line := `func (s *Server) Handle(ctx context.Context, req *Request) error {\n\tif req.ID == nil { return errors.New(\"no id\") }\n`
	text := strings.Repeat(line, 8)[:880]
	text = strings.TrimRight(text, "\\")
	return []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"edit_file","arguments":{"path":"/src/server.go","newText":"` + text + `"}}}`)
}

func BenchmarkClassifyCode1KiB(b *testing.B)     { benchmarkClassify(b, codeFrame1KiB(), H2S) }
func BenchmarkClassifyRequest1KiB(b *testing.B)  { benchmarkClassify(b, frame1KiB(false), H2S) }
func BenchmarkClassifyResponse1KiB(b *testing.B) { benchmarkClassify(b, frame1KiB(true), S2H) }
func BenchmarkClassifyCJK1KiB(b *testing.B)      { benchmarkClassify(b, cjkFrame1KiB(), H2S) }

// cjkFrame1KiB is a tools/call request whose argument is text in a script
// that is not ASCII: the scanner takes it a character at a time.
func cjkFrame1KiB() []byte {
	text := strings.Repeat("敏捷的棕色狐狸跳过了懒狗。", 24)[:864]
	return []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"echo","arguments":{"message":"` + text + `"}}}`)
}
