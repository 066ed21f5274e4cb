package main

// The network bridge's startup cost: cordon run with an allowed domain
// (the init makes the proxy's two listening sockets inside and hands them
// to cordon, which starts serving its proxy on them) against cordon run
// without one (no proxy at all), interleaved, on /bin/true. No connection
// is made: this is what every command of an agent with network access
// pays. Goal: at most a millisecond or two.

import (
	"fmt"
	"os"
	"os/exec"
	"text/tabwriter"
	"time"
)

// bridgeBench measures the bridge's cost per command over n runs each.
func bridgeBench(cordon string, n int) error {
	work, err := os.MkdirTemp("", "cordon-bench-bridge-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	truePath, err := exec.LookPath("true")
	if err != nil {
		return err
	}
	// x.invalid never resolves, and nothing asks it to.
	without := &contender{name: "no network", dir: work, argv: []string{cordon, "run", "--", truePath}}
	with := &contender{name: "with the bridge", dir: work, argv: []string{cordon, "run", "--allow-domain", "x.invalid", "--", truePath}}
	cs := []*contender{without, with}
	for _, c := range cs {
		for range 3 {
			if _, _, err := once(c); err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
		}
	}
	var diffs, cpuDiffs []time.Duration // with - without, run by run
	for i := range n {
		// Alternate which goes first, so that neither always runs on
		// the other's freshly warmed caches.
		order := cs
		if i%2 == 1 {
			order = []*contender{with, without}
		}
		for _, c := range order {
			d, used, err := once(c)
			if err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			c.wall = append(c.wall, d)
			c.cpu = append(c.cpu, used)
		}
		diffs = append(diffs, with.wall[i]-without.wall[i])
		cpuDiffs = append(cpuDiffs, with.cpu[i]-without.cpu[i])
	}

	if err := measureRSS(work, cs); err != nil {
		return err
	}

	fmt.Printf("\ncordon run: startup with the network bridge (--allow-domain x.invalid) and without, /bin/true, %d runs each, interleaved\n\n", n)
	w := tabwriter.NewWriter(os.Stdout, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "contender\tmedian\tp90\tCPU (median)\tpeak RSS\t")
	for _, c := range cs {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t\n", c.name, ms(median(c.wall)), ms(percentile(c.wall, 0.9)), ms(median(c.cpu)), kib(c.rss))
	}
	w.Flush()
	fmt.Println()
	fmt.Printf("the bridge adds %s of wall time (difference of the medians; the %d paired differences: median %s, middle half %s to %s)\n",
		signedMS(median(with.wall)-median(without.wall)), n, signedMS(median(diffs)),
		signedMS(percentile(diffs, 0.25)), signedMS(percentile(diffs, 0.75)))
	fmt.Printf("               %s of CPU time (cordon and its sandbox; paired differences: median %s, middle half %s to %s); goal: at most 1-2 ms\n",
		signedMS(median(with.cpu)-median(without.cpu)), signedMS(median(cpuDiffs)),
		signedMS(percentile(cpuDiffs, 0.25)), signedMS(percentile(cpuDiffs, 0.75)))
	return nil
}

// signedMS is ms with the sign always shown.
func signedMS(d time.Duration) string {
	if d < 0 {
		return "-" + ms(-d)
	}
	return "+" + ms(d)
}
