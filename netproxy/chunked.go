package netproxy

import (
	"bufio"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
)

// maxChunkLine bounds a chunk-size line with its extensions.
const maxChunkLine = 4096

// chunkedReader decodes a chunked body (RFC 9112 7.1) from br, strictly:
// CRLF line ends only, a size of hexadecimal digits, extensions of
// visible characters, CRLF right after the data. A bare LF or CR there is
// what lets a lenient server and a strict one see different bodies
// (CVE-2025-22871).
type chunkedReader struct {
	br      *bufio.Reader
	left    int64 // bytes of the current chunk not yet read
	inChunk bool  // reading a chunk's data (then its CRLF)
	done    bool  // the last chunk and the trailer section were read
	trailer header
	err     error
	// large is the proxy's large head slots (see lineReader): a trailer
	// section past largeHead needs one, held by tr until release.
	large chan struct{}
	tr    *lineReader
}

// release gives back the large head slot the trailer section holds.
func (r *chunkedReader) release() {
	if r.tr != nil {
		r.tr.release()
	}
}

func (r *chunkedReader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if r.done {
		return 0, io.EOF
	}
	if !r.inChunk {
		n, err := r.size()
		if err != nil {
			r.err = err
			return 0, err
		}
		if n == 0 {
			r.tr = &lineReader{br: r.br, budget: maxHead, crlf: true, large: r.large}
			r.trailer, r.err = r.tr.fields()
			if r.err != nil {
				r.err = unexpected(r.err)
				return 0, r.err
			}
			r.done = true
			return 0, io.EOF
		}
		r.left, r.inChunk = n, true
	}
	if int64(len(p)) > r.left {
		p = p[:r.left]
	}
	n, err := r.br.Read(p)
	r.left -= int64(n)
	if r.left == 0 {
		if crlf, err := r.br.Peek(2); err != nil || crlf[0] != '\r' || crlf[1] != '\n' {
			r.err = badHead("no CRLF after a chunk")
			if err != nil {
				r.err = unexpected(err)
			}
			return n, nil
		}
		r.br.Discard(2)
		r.inChunk = false
	}
	if err != nil {
		r.err = unexpected(err)
		if n == 0 {
			return 0, r.err
		}
	}
	return n, nil
}

// unexpected turns the end of the stream inside a body into an error.
func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// size reads a chunk-size line: hex digits, then optionally extensions
// after ";", then CRLF.
func (r *chunkedReader) size() (int64, error) {
	lr := &lineReader{br: r.br, budget: maxChunkLine, crlf: true}
	l, err := lr.line()
	if err != nil {
		var he *headError
		if errors.As(err, &he) {
			return 0, badHead("chunk-size line: %s", he.msg)
		}
		return 0, unexpected(err)
	}
	// extensions follow a ";" (no white space before it: net/http takes
	// none either)
	digits, ext, _ := strings.Cut(l, ";")
	if !validValue(ext) {
		return 0, badHead("malformed chunk extension")
	}
	// hex digits only: strconv.ParseUint takes no sign, prefix or "_" in
	// base 16
	n, err := strconv.ParseUint(digits, 16, 63)
	if errors.Is(err, strconv.ErrRange) {
		return 0, badHead("chunk size out of range")
	}
	if err != nil {
		return 0, badHead("malformed chunk size")
	}
	return int64(n), nil
}

// copyChunked decodes a chunked body from src and writes it to dst,
// chunked again when rechunk (the trailer fields passed on, hop-by-hop
// ones dropped), or as plain bytes for a reader that reads until the
// connection closes.
func copyChunked(dst net.Conn, src *bufio.Reader, rechunk bool, large chan struct{}) (readErr, writeErr error) {
	cr := &chunkedReader{br: src, large: large}
	defer cr.release()
	buf := bodyPool.Get().(*[bodyBufferSize]byte)
	defer bodyPool.Put(buf)
	var size [20]byte
	for {
		n, err := cr.Read(buf[:])
		if n > 0 {
			var werr error
			if rechunk {
				hdr := strconv.AppendInt(size[:0], int64(n), 16)
				hdr = append(hdr, '\r', '\n')
				bufs := net.Buffers{hdr, buf[:n], []byte("\r\n")}
				_, werr = bufs.WriteTo(dst)
			} else {
				_, werr = dst.Write(buf[:n])
			}
			if werr != nil {
				return nil, werr
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err, nil
		}
	}
	if !rechunk {
		return nil, nil
	}
	end := append([]byte("0\r\n"), cr.trailer.endToEnd(nil, "Host")...)
	end = append(end, "\r\n"...)
	_, err := dst.Write(end)
	return nil, err
}
