package classify

import (
	"fmt"
	"strings"
	"testing"
)

func benchQuoteFrames() map[string][]byte {
	dense := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result":{"content":[`, 7)
	for i := 0; len(dense) < 1000; i++ {
		dense = fmt.Appendf(dense, `{"type":"text","name":"item-%d","ok":true},`, i)
	}
	code := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"edit_file","arguments":{"path":"/home/dev/project/src/server.go","dryRun":false,"newText":"` +
		strings.Repeat(`func (s *Server) Handle(ctx context.Context, req *Request) error {\n\tif req.ID == nil { return errors.New(\"no id\") }\n`, 7) + `"}}}`)
	prose := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + strings.Repeat("The quick brown fox jumps over the lazy dog. ", 22) + `"}]}}`)
	cjk := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + strings.Repeat("敏捷的棕色狐狸跳过了懒狗。", 26) + `"}]}}`)
	return map[string][]byte{"dense": dense, "code": code, "prose": prose, "cjk": cjk}
}

func BenchmarkAppendQuoted(b *testing.B) {
	for name, f := range benchQuoteFrames() {
		b.Run(name, func(b *testing.B) {
			buf := make([]byte, 0, 4096)
			b.SetBytes(int64(len(f)))
			for b.Loop() {
				buf, _ = AppendQuoted(buf[:0], f, true)
			}
		})
	}
}
