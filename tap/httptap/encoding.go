package httptap

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"io"
	"net/http"
	"strings"
)

// A body in a Content-Encoding of gzip or deflate is relayed as it came;
// the proxy decodes a copy to record its messages, holding no more of it
// decoded than maxBody. Other encodings (br, zstd) are relayed unread.

// encoding is h's Content-Encoding, lower case: "" for none or identity.
func encoding(h http.Header) string {
	e := strings.ToLower(strings.TrimSpace(h.Get("Content-Encoding")))
	if e == "identity" {
		return ""
	}
	return e
}

// decodable says whether the proxy reads the messages of a body in
// encoding e.
func decodable(e string) bool {
	return e == "gzip" || e == "x-gzip" || e == "deflate"
}

// newDecoder reads the body from r in encoding e.
func newDecoder(e string, r io.Reader) (io.Reader, error) {
	if e == "deflate" {
		return zlib.NewReader(r)
	}
	return gzip.NewReader(r)
}

var errDecodedTooLarge = errors.New("too large")

// decodeHeld decodes a body held whole, up to maxBody decoded bytes.
func decodeHeld(e string, b []byte) ([]byte, error) {
	zr, err := newDecoder(e, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	out, err := io.ReadAll(io.LimitReader(zr, maxBody+1))
	if err != nil {
		return nil, err
	}
	if len(out) > maxBody {
		return nil, errDecodedTooLarge
	}
	return out, nil
}

// undecodable is what a record says of a body whose encoding could not
// be decoded.
func undecodable(e string, err error) string {
	if errors.Is(err, errDecodedTooLarge) {
		return "the body is larger than rpctap holds to record (16 MiB) once decoded from " + e + "; it was relayed as it came"
	}
	return "the body's " + e + " encoding could not be decoded (" + err.Error() + "); it was relayed as it came"
}

// A streamDecoder decodes a copy of an encoded stream as it is relayed:
// write hands it the bytes that crossed, and out gets them decoded, in
// the decoder's own goroutine, as soon as they can be. Once decoding
// stops (the encoded stream ended or is broken) the rest is dropped.
type streamDecoder struct {
	w    *io.PipeWriter
	done chan struct{}
	err  error // why decoding stopped early; read once done is closed
}

var errDecodeStopped = errors.New("decoding stopped")

func decodeStream(e string, out func([]byte)) *streamDecoder {
	r, w := io.Pipe()
	d := &streamDecoder{w: w, done: make(chan struct{})}
	go func() {
		defer close(d.done)
		defer r.CloseWithError(errDecodeStopped) // the writes after a stop return at once
		zr, err := newDecoder(e, r)
		if err != nil {
			d.err = err
			return
		}
		buf := make([]byte, 32<<10)
		for {
			n, err := zr.Read(buf)
			out(buf[:n])
			if err != nil {
				if err != io.EOF {
					d.err = err
				}
				return
			}
		}
	}()
	return d
}

// write hands the decoder bytes that crossed. Its error is not the
// relay's: a copy that cannot be decoded is dropped.
func (d *streamDecoder) write(p []byte) { d.w.Write(p) }

// close ends the stream and waits for what is left of it to be decoded;
// it says why decoding stopped early, if it did.
func (d *streamDecoder) close() error {
	d.w.Close()
	<-d.done
	return d.err
}
