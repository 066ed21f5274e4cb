package netproxy

import (
	"bufio"
	"errors"
	"net"
	"os"
	"sync"
	"time"
)

// Idle upstream connections of the HTTP forwarding, per Proxy (per run).
const (
	maxIdlePerDest = 8
	maxIdle        = 64
	idleUpstream   = 90 * time.Second
)

// pool holds a Proxy's idle upstream connections by destination: the
// name and port a request was allowed to reach (Decision.dest), never an
// address, with the route's name for it. A connection is reused only for a request allowed to reach
// the same name, so that a request for one name never travels on a
// connection made for another that resolved to the same address.
type pool struct {
	p       *Proxy
	timeout time.Duration // how long a connection stays idle
	mu      sync.Mutex
	closed  bool
	idle    map[string][]*upConn
	n       int
}

// upConn is a connection to an upstream server.
type upConn struct {
	c      net.Conn
	br     *bufio.Reader // reads c through hr
	hr     *headReader
	dest   string     // the pool's key: the route's and the destination's name
	reused bool       // it came from the pool
	watch  chan error // while idle: what ended the watcher's read
}

// get takes the most recently used idle connection to dest, or nil.
func (pl *pool) get(dest string) *upConn {
	for {
		pl.mu.Lock()
		list := pl.idle[dest]
		if len(list) == 0 {
			pl.mu.Unlock()
			return nil
		}
		uc := list[len(list)-1]
		pl.drop(uc)
		pl.mu.Unlock()
		// stop the watcher: a read that times out leaves the connection
		// as it was; one that returns anything else found it closed (or
		// talking out of turn)
		uc.c.SetReadDeadline(time.Unix(1, 0))
		err := <-uc.watch
		uc.c.SetReadDeadline(time.Time{})
		if errors.Is(err, os.ErrDeadlineExceeded) && uc.br.Buffered() == 0 {
			uc.reused = true
			return uc
		}
		uc.c.Close()
	}
}

// put keeps uc idle for its destination; false when it was not kept (the
// pool is full or closed), and the caller closes it.
func (pl *pool) put(uc *upConn) bool {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if pl.closed || len(pl.idle[uc.dest]) >= maxIdlePerDest || pl.n >= maxIdle {
		return false
	}
	if !pl.p.begin(nil) {
		return false
	}
	if pl.idle == nil {
		pl.idle = map[string][]*upConn{}
	}
	uc.watch = make(chan error, 1)
	pl.idle[uc.dest] = append(pl.idle[uc.dest], uc)
	pl.n++
	uc.c.SetReadDeadline(time.Now().Add(pl.timeout))
	go pl.watcher(uc)
	return true
}

// watcher reads the idle connection uc until the server closes it, it
// has been idle too long, or get takes it.
func (pl *pool) watcher(uc *upConn) {
	defer pl.p.wg.Done()
	_, err := uc.br.Peek(1)
	pl.mu.Lock()
	idle := pl.drop(uc)
	pl.mu.Unlock()
	if idle {
		uc.c.Close()
	}
	uc.watch <- err
}

// drop removes uc from the idle lists; false when it was not there.
// pl.mu is held.
func (pl *pool) drop(uc *upConn) bool {
	list := pl.idle[uc.dest]
	for i, x := range list {
		if x == uc {
			list = append(list[:i], list[i+1:]...)
			if len(list) == 0 {
				delete(pl.idle, uc.dest)
			} else {
				pl.idle[uc.dest] = list
			}
			pl.n--
			return true
		}
	}
	return false
}

// close closes every idle connection, and any put later.
func (pl *pool) close() {
	pl.mu.Lock()
	pl.closed = true
	idle := pl.idle
	pl.idle, pl.n = nil, 0
	pl.mu.Unlock()
	for _, list := range idle {
		for _, uc := range list {
			uc.c.Close()
		}
	}
}
