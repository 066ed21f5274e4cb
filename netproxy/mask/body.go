package mask

import (
	"bytes"
	"io"
)

// pair is a fake and what goes out in its place: the real value for a
// secret of the destination, the fake itself for another's (seen, and
// reported).
type pair struct {
	from, to []byte
	sec      *Secret
}

// replacer streams a body with every fake of pairs replaced. It holds
// back the last bytes of what it read (one fewer than the longest fake)
// until it knows they start no fake, so a fake cut between two reads is
// still found; memory stays bounded by one read and that tail, however
// long the body. The real value put in is never scanned again.
type replacer struct {
	r       io.Reader
	pairs   []pair
	maxLen  int
	seen    func(pair)
	pending []byte // read, not yet scanned out
	out     []byte // ready for the reader
	eof     bool
	buf     []byte
}

func newReplacer(r io.Reader, pairs []pair, seen func(pair)) *replacer {
	rp := &replacer{r: r, pairs: pairs, seen: seen, buf: make([]byte, 32<<10)}
	for _, p := range pairs {
		rp.maxLen = max(rp.maxLen, len(p.from))
	}
	return rp
}

func (rp *replacer) Read(p []byte) (int, error) {
	for len(rp.out) == 0 {
		if rp.eof {
			if len(rp.pending) == 0 {
				return 0, io.EOF
			}
			rp.scan(true)
			continue
		}
		n, err := rp.r.Read(rp.buf)
		rp.pending = append(rp.pending, rp.buf[:n]...)
		if err == io.EOF {
			rp.eof = true
		} else if err != nil {
			return 0, err
		}
		rp.scan(rp.eof)
	}
	n := copy(p, rp.out)
	rp.out = rp.out[n:]
	if len(rp.out) == 0 {
		rp.out = nil
	}
	return n, nil
}

// scan moves what pending holds to out, fakes replaced, keeping back a
// tail that could start a fake unless this is the end.
func (rp *replacer) scan(end bool) {
	work := rp.pending
	pos := 0
	for {
		at, which := -1, -1
		for i, p := range rp.pairs {
			if j := bytes.Index(work[pos:], p.from); j >= 0 && (at < 0 || j < at) {
				at, which = j, i
			}
		}
		if which < 0 {
			break
		}
		p := rp.pairs[which]
		rp.out = append(rp.out, work[pos:pos+at]...)
		rp.out = append(rp.out, p.to...)
		rp.seen(p)
		pos += at + len(p.from)
	}
	keep := 0
	if !end {
		keep = min(rp.maxLen-1, len(work)-pos)
	}
	rp.out = append(rp.out, work[pos:len(work)-keep]...)
	rp.pending = append(rp.pending[:0], work[len(work)-keep:]...)
}

// Close closes the underlying body when it can be.
func (rp *replacer) Close() error {
	if c, ok := rp.r.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
