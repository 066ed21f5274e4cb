package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// IsolateNetwork is the network hook: it reads the container's state (the
// OCI hook protocol, on stdin) and removes every interface but loopback
// from the container's network namespace, whatever earlier hooks (a CNI
// hook of nerdctl's) configured there. An interface it can neither delete
// nor move out fails the hook, and with it the container's creation.
func IsolateNetwork(stdin io.Reader) error {
	var st specs.State
	if err := json.NewDecoder(stdin).Decode(&st); err != nil {
		return fmt.Errorf("network hook: container state: %w", err)
	}
	if st.Pid <= 0 {
		return errors.New("network hook: the state has no pid")
	}
	nsPath := "/proc/" + strconv.Itoa(st.Pid) + "/ns/net"
	ns, err := netns.GetFromPath(nsPath)
	if err != nil {
		return fmt.Errorf("network hook: %w", err)
	}
	defer ns.Close()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		return fmt.Errorf("network hook: enter %s: %w", nsPath, err)
	}
	defer h.Close()
	links, err := h.LinkList()
	if err != nil {
		return fmt.Errorf("network hook: list interfaces: %w", err)
	}
	for _, l := range links {
		a := l.Attrs()
		if a.Name == "lo" {
			continue
		}
		// Deleting one end of a veth pair deletes the other: gone is done.
		if err := h.LinkDel(l); err == nil || errors.Is(err, unix.ENODEV) {
			continue
		}
		if _, err := h.LinkByIndex(a.Index); err != nil {
			continue
		}
		// A physical device cannot be deleted: it goes back to the
		// runtime's own network namespace, down.
		_ = h.LinkSetDown(l)
		self, err := netns.Get()
		if err != nil {
			return fmt.Errorf("network hook: %w", err)
		}
		err = h.LinkSetNsFd(l, int(self))
		self.Close()
		if err != nil {
			return fmt.Errorf("network hook: remove interface %s from the container: %w", a.Name, err)
		}
	}
	return nil
}
