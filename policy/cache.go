package policy

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"reflect"
	"sync"
)

// Cache keeps the policies Load made, by everything Load read to make
// them: the options, the path, the outcome and the whole content of every
// settings file it looked for (present, absent or unreadable), and the
// workspace's real path. Each Load through the cache still reads every
// file; only checking and merging them is saved, so that a settings file
// edited in any way — the same size and modification time included —
// gives a new policy at once. cordon serve loads the policy of every
// command it runs.
type Cache struct {
	mu   sync.Mutex
	size int
	m    map[[sha256.Size]byte]*Policy
	// order is the keys from the oldest.
	order [][sha256.Size]byte
}

// NewCache returns a cache of the last size policies.
func NewCache(size int) *Cache {
	return &Cache{size: max(size, 1), m: map[[sha256.Size]byte]*Policy{}}
}

// Load is Load through the cache. The Policy returned may be the one an
// earlier call returned: callers must not modify it.
func (c *Cache) Load(o LoadOptions) (*Policy, error) {
	in, err := discover(o)
	if err != nil {
		return nil, err
	}
	// A file system of the caller's may be anything: only the real one.
	if o.FS != nil {
		return in.load()
	}
	key := in.key()
	c.mu.Lock()
	p := c.m[key]
	c.mu.Unlock()
	if p != nil {
		return p, nil
	}
	// Errors are not kept: the next Load reads the files again anyway.
	if p, err = in.load(); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[key]; !ok {
		c.m[key] = p
		c.order = append(c.order, key)
		if len(c.order) > c.size {
			delete(c.m, c.order[0])
			c.order = c.order[1:]
		}
	}
	return p, nil
}

// key is a digest of everything load depends on.
func (in *inputs) key() [sha256.Size]byte {
	h := sha256.New()
	str := func(s string) {
		writeLen(h, len(s))
		h.Write([]byte(s))
	}
	strs := func(ss []string) {
		writeLen(h, len(ss))
		for _, s := range ss {
			str(s)
		}
	}
	o := in.o
	str(o.Workspace)
	str(o.Cwd)
	str(o.Home)
	str(o.ConfigHome)
	strs(o.Settings)
	if o.ManagedFiles == nil {
		str("default managed files")
	} else {
		str("managed files")
		strs(o.ManagedFiles)
	}
	if o.NoDiscovery {
		str("no discovery")
	} else {
		str("discovery")
	}
	// Every field of Flags, whatever fields it gains.
	fv := reflect.ValueOf(o.Flags)
	for i := range fv.NumField() {
		str(fv.Type().Field(i).Name)
		switch f := fv.Field(i); f.Kind() {
		case reflect.String:
			str(f.String())
		case reflect.Slice:
			strs(f.Interface().([]string))
		default:
			panic("policy: a Flags field of kind " + f.Kind().String() + " is not in the cache key")
		}
	}
	writeLen(h, len(in.cands))
	for i, c := range in.cands {
		str(c.path)
		str(c.scope.String())
		writeLen(h, int(c.format))
		str(c.base)
		switch err := in.errs[i]; {
		case err == nil:
			str("read")
			str(string(in.data[i]))
		default:
			str("error")
			str(err.Error())
		}
	}
	str(in.real)
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

func writeLen(h hash.Hash, n int) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(n))
	h.Write(b[:])
}
