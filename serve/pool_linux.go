package serve

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"cordon.dev/cordon/runtime"
)

// Pool bounds.
const (
	// maxAge is how long a sandbox waits for a command before it is
	// replaced: nothing it holds goes stale that Intact would not see,
	// but a bound keeps that argument small.
	maxAge = 5 * time.Minute
	// shelfIdle is how long a policy's sandboxes are kept ready after its
	// last command.
	shelfIdle = 3 * time.Minute
	// refillQuiet is how long no command must have run before the used
	// sandboxes are replaced. Made at once, the next one would take the
	// CPUs from what the caller does with the output it just got (Claude
	// Code reading a tool's result: bench -only claude); the shelf's
	// others serve meanwhile (one less than half full is filled at once).
	refillQuiet = 100 * time.Millisecond
)

// pool keeps sandboxes ready, per pool key.
type pool struct {
	size int
	// create makes a sandbox (runtime.NewPooled).
	create func(s *specs.Spec, o runtime.Options) (*runtime.Pooled, error)
	// gen counts the changes of the host's mount table: a sandbox made
	// before one would differ from one made after it.
	gen atomic.Uint64
	// making bounds the sandboxes made in the background at once: the
	// commands that run come first.
	making chan struct{}

	// makers are the sandboxes being made or ended in the background,
	// which close waits for.
	makers sync.WaitGroup

	mu     sync.Mutex
	shelf  map[string]*shelf
	closed bool
	log    func(format string, args ...any)
	// hits and misses count the commands that found a sandbox ready, and
	// those that waited for one; drops, the mount table changes that
	// discarded the ready ones.
	hits, misses, drops uint64
	// refillAfter refills the shelves once the mount table has been
	// quiet for a moment after a change.
	refillAfter *time.Timer
	// running counts the commands in the pool's sandboxes; quiet
	// refills the shelves once none has run for refillQuiet.
	running int
	quiet   *time.Timer
}

// settle is how long the mount table must stay unchanged after a change
// before the pool is made again: changes come in bursts (a container
// starting mounts dozens of things).
const settle = 250 * time.Millisecond

// shelf holds the sandboxes of one pool key.
type shelf struct {
	key     string
	spec    *specs.Spec     // a spec of the key, to make more from
	opts    runtime.Options // the sandbox's options
	ready   []ready
	pending int
	used    time.Time
}

// ready is one sandbox on a shelf.
type ready struct {
	p   *runtime.Pooled
	gen uint64
}

func newPool(size, parallel int, create func(*specs.Spec, runtime.Options) (*runtime.Pooled, error)) *pool {
	return &pool{size: size, create: create, making: make(chan struct{}, max(parallel, 1)), shelf: map[string]*shelf{}}
}

// get returns a sandbox for the key: one ready and intact, or one made now.
// done makes more once the command is over: made meanwhile, they would
// take the CPUs from it.
func (pl *pool) get(key string, s *specs.Spec, o runtime.Options) (p *runtime.Pooled, err error) {
	pl.mu.Lock()
	pl.running++
	if pl.quiet != nil {
		pl.quiet.Stop()
	}
	defer func() {
		if err != nil {
			pl.done(key)
		}
	}()
	sh := pl.shelf[key]
	if sh == nil {
		sh = &shelf{key: key}
		pl.shelf[key] = sh
	}
	sh.spec, sh.opts, sh.used = s, o, time.Now()
	var stale []*runtime.Pooled
	var got *runtime.Pooled
	gen := pl.gen.Load()
	for len(sh.ready) > 0 && got == nil {
		r := sh.ready[len(sh.ready)-1]
		sh.ready = sh.ready[:len(sh.ready)-1]
		if r.gen != gen || time.Since(r.p.Made) > maxAge {
			stale = append(stale, r.p)
			continue
		}
		got = r.p
	}
	if got != nil {
		pl.hits++
	} else {
		pl.misses++
	}
	pl.mu.Unlock()
	pl.background(func() { closeAll(stale) })
	// The check reads the sandbox's mount table: outside the lock.
	if got != nil && got.Intact() != nil {
		pl.background(got.Close)
		got = nil
	}
	if got != nil {
		return got, nil
	}
	return pl.create(s, o)
}

// background runs f apart; close waits for it.
func (pl *pool) background(f func()) {
	pl.makers.Add(1)
	go func() {
		defer pl.makers.Done()
		f()
	}()
}

// done ends a command of get's: its shelf is filled again at once when
// less than half of it is left (commands coming one after the other would
// empty it), or else once no command has run for refillQuiet.
func (pl *pool) done(key string) {
	pl.mu.Lock()
	pl.running--
	sh := pl.shelf[key]
	low := sh != nil && 2*(len(sh.ready)+sh.pending) < pl.size
	if pl.running == 0 && !pl.closed {
		if pl.quiet == nil {
			pl.quiet = time.AfterFunc(refillQuiet, pl.refillWhenQuiet)
		} else {
			pl.quiet.Reset(refillQuiet)
		}
	}
	pl.mu.Unlock()
	if low {
		pl.fill(sh)
	}
}

// refillWhenQuiet fills every shelf, unless a command runs.
func (pl *pool) refillWhenQuiet() {
	pl.mu.Lock()
	busy := pl.running > 0
	pl.mu.Unlock()
	if !busy {
		pl.refillAll()
	}
}

// fill makes sandboxes in the background until the shelf holds size of
// them (made or being made).
func (pl *pool) fill(sh *shelf) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	for !pl.closed && len(sh.ready)+sh.pending < pl.size {
		sh.pending++
		pl.makers.Add(1)
		go pl.makeOne(sh, sh.spec, sh.opts)
	}
}

func (pl *pool) makeOne(sh *shelf, s *specs.Spec, o runtime.Options) {
	defer pl.makers.Done()
	pl.making <- struct{}{}
	gen := pl.gen.Load()
	p, err := pl.create(s, o)
	if err != nil && pl.log != nil {
		pl.log("make a sandbox: %v", err)
	}
	<-pl.making
	pl.mu.Lock()
	sh.pending--
	keep := err == nil && !pl.closed && pl.shelf[sh.key] == sh && pl.gen.Load() == gen
	if keep {
		sh.ready = append(sh.ready, ready{p, gen})
	}
	pl.mu.Unlock()
	if err == nil && !keep {
		p.Close()
	}
}

// changed drops every ready sandbox: the host's mounts changed, and a
// sandbox made now could differ from them (a new mount visible, an
// unmounted one gone). The shelves are filled again once the mount table
// has settled.
func (pl *pool) changed() {
	pl.gen.Add(1)
	pl.mu.Lock()
	var drop []*runtime.Pooled
	for _, sh := range pl.shelf {
		for _, r := range sh.ready {
			drop = append(drop, r.p)
		}
		sh.ready = nil
	}
	if len(drop) > 0 {
		pl.drops++
	}
	if pl.refillAfter == nil {
		pl.refillAfter = time.AfterFunc(settle, pl.refillAll)
	} else {
		pl.refillAfter.Reset(settle)
	}
	pl.mu.Unlock()
	closeAll(drop)
}

// refillAll fills every shelf.
func (pl *pool) refillAll() {
	pl.mu.Lock()
	var shelves []*shelf
	for _, sh := range pl.shelf {
		if time.Since(sh.used) <= shelfIdle {
			shelves = append(shelves, sh)
		}
	}
	pl.mu.Unlock()
	for _, sh := range shelves {
		pl.fill(sh)
	}
}

// stats says how the pool served.
func (pl *pool) stats() string {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return fmt.Sprintf("%d commands found a sandbox ready, %d waited for one; mount table changes discarded the ready ones %d times", pl.hits, pl.misses, pl.drops)
}

// sweep drops the shelves of policies no command used for a while, and
// replaces sandboxes that waited too long.
func (pl *pool) sweep() {
	pl.mu.Lock()
	var drop []*runtime.Pooled
	var refill []*shelf
	for key, sh := range pl.shelf {
		idle := time.Since(sh.used) > shelfIdle
		kept := sh.ready[:0]
		for _, r := range sh.ready {
			if idle || time.Since(r.p.Made) > maxAge {
				drop = append(drop, r.p)
			} else {
				kept = append(kept, r)
			}
		}
		sh.ready = kept
		if idle && sh.pending == 0 {
			delete(pl.shelf, key)
		} else if !idle {
			refill = append(refill, sh)
		}
	}
	pl.mu.Unlock()
	closeAll(drop)
	for _, sh := range refill {
		pl.fill(sh)
	}
}

// close drops everything, makes no more, and returns once the sandboxes
// being made are gone too.
func (pl *pool) close() {
	defer pl.makers.Wait()
	pl.mu.Lock()
	pl.closed = true
	if pl.refillAfter != nil {
		pl.refillAfter.Stop()
	}
	if pl.quiet != nil {
		pl.quiet.Stop()
	}
	var drop []*runtime.Pooled
	for _, sh := range pl.shelf {
		for _, r := range sh.ready {
			drop = append(drop, r.p)
		}
	}
	pl.shelf = map[string]*shelf{}
	pl.mu.Unlock()
	closeAll(drop)
}

// idle counts the sandboxes ready.
func (pl *pool) idle() int {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	n := 0
	for _, sh := range pl.shelf {
		n += len(sh.ready)
	}
	return n
}

func closeAll(ps []*runtime.Pooled) {
	for _, p := range ps {
		p.Close()
	}
}

// watchMounts calls changed whenever the host's mount table changes
// (/proc/self/mountinfo polls with POLLPRI then), until stop is closed.
func watchMounts(changed func(), stop <-chan struct{}) error {
	fd, err := unix.Open("/proc/self/mountinfo", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	go func() {
		defer unix.Close(fd)
		buf := make([]byte, 64<<10)
		for {
			select {
			case <-stop:
				return
			default:
			}
			fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLPRI}}
			n, err := unix.Poll(fds, 1000)
			if err != nil && err != unix.EINTR {
				return
			}
			if n > 0 && fds[0].Revents&(unix.POLLPRI|unix.POLLERR) != 0 {
				// Reading the table to its end rearms the event.
				_, _ = unix.Seek(fd, 0, 0)
				for {
					m, err := unix.Read(fd, buf)
					if m <= 0 || err != nil {
						break
					}
				}
				changed()
			}
		}
	}()
	return nil
}
