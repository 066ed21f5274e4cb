package main

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strconv"
	"strings"

	"github.com/urfave/cli/v3"

	"cordon.dev/cordon/netproxy"
	"cordon.dev/cordon/policy"
	"cordon.dev/cordon/runtime"
	"cordon.dev/cordon/spec"
)

func runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "run a command in the sandbox",
		ArgsUsage: "[--] COMMAND [ARGS...]",
		Flags: append(sandboxFlags(),
			&cli.BoolFlag{Name: "stats", Usage: "end with a line of resource usage on stderr (wall, cpu, peak memory, pids)"},
			&cli.BoolFlag{Name: "detach", Aliases: []string{"d"}, Usage: "run in the background with a lifetime of its own (a dev server): print the run's id once the command runs; see cordon logs, list, stop"},
			&cli.BoolFlag{Name: "serve", Usage: "use cordon serve, starting it when none runs, unless the settings set cordon.serve to false (cordon hook claude passes it)"},
			&cli.StringFlag{Name: "session", Usage: "the agent's session `ID` (cordon hook claude passes Claude Code's): cordon's warnings are said once per session instead of once per boot"},
			&cli.IntFlag{Name: "cwd-fd", Usage: "for bash -c COMMAND: write the directory COMMAND's shell ended in on descriptor `N`, when it ended with status 0 and that directory is the host's own (cordon hook claude's cd that carries over)"},
		),
		StopOnNthArg: ptr(1),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if done, err := runNative(ctx, cmd); done {
				return err // macOS: run_darwin.go
			}
			id := detachedID()
			var cwdOut *os.File
			if cmd.IsSet("cwd-fd") {
				if cmd.Bool("detach") || id != "" {
					return fmt.Errorf("--cwd-fd and --detach: a detached command's directory is not the caller's")
				}
				var err error
				if cwdOut, err = cwdFile(int(cmd.Int("cwd-fd"))); err != nil {
					return err
				}
				defer cwdOut.Close()
			}
			if cmd.Bool("detach") && id == "" {
				return detach(cmd)
			}
			runtime.Trace("run")
			if status, ok, err := runServed(ctx, cmd, cwdOut); ok {
				if err == nil && status != 0 {
					err = exitStatus(status)
				}
				return err
			}
			root := runtime.StateRoot()
			// While the policy compiles: what crashed runs left goes
			// (before a new one starts), and the work libcontainer would
			// wait for later is started (runtime.Preheat).
			swept := make(chan struct{})
			go func() {
				defer close(swept)
				_, _ = runtime.GCBeforeRun(root)
			}()
			runtime.Preheat()
			sb, err := compile(ctx, cmd)
			runtime.Trace("compiled")
			<-swept
			runtime.Trace("swept")
			if err != nil {
				return err
			}
			defer sb.close()
			serveStarted := func() string { return "" }
			if id == "" && unservable(sb) == "" {
				// The next run finds it (cordon serve).
				serveStarted = startServe()
			}
			if err := runtime.Prepare(sb.req.Host); err != nil {
				return err
			}
			runtime.Trace("prepared")
			rep := newRunReport(sb)
			out, errOut := os.Stdout, os.Stderr
			var started func()
			var logged func(int, error)
			if id != "" {
				if out, started, logged, err = detachedIO(id); err != nil {
					return err
				}
				errOut = out
			}
			o := runOptions(cmd, sb, rep, os.Stdin, out, errOut, stderr)
			o.Root, o.Started = root, started
			var cwd *cwdReport
			if cwdOut != nil {
				if cwd, err = newCwdReport(cwdOut); err != nil {
					return err
				}
				o.Fd3 = cwd.w
			}
			status, err := runtime.Run(ctx, sb.spec, o)
			sb.caches.Close()
			if sb.policy.Caches.Enabled {
				runtime.SweepCaches(runtime.CacheRoot(sb.policy.Home, os.Environ()), sb.policy.Caches.MaxAge, sb.policy.Caches.MaxSize)
			}
			runtime.Trace("ran")
			if cwd != nil {
				if err != nil {
					status = exitCordonFailed
				}
				cwd.done(sb.spec, status)
			}
			rep.done(ctx, sb.policy, status, err)
			runtime.Trace("reported")
			if why := serveStarted(); why != "" && sayOnce(sb.probe, sb.session, []string{"cordon serve: " + why}) {
				fmt.Fprintf(os.Stderr, "cordon: warning: cordon serve could not start (%s): commands run without it, cold (said %s)\n", why, once(sb.session))
			}
			if logged != nil {
				logged(status, err)
			}
			if err != nil {
				return err
			}
			if status != 0 {
				return exitStatus(status)
			}
			return nil
		},
	}
}

// runOptions are the runtime's options for a run of sb (cordon run's, and
// cordon serve's for its clients): the command's standard descriptors,
// its limits, its proxy, and where cordon's own lines go (w).
func runOptions(cmd *cli.Command, sb *sandbox, rep *runReport, stdin, stdout, errOut *os.File, w io.Writer) runtime.Options {
	return runtime.Options{
		ID:          sb.req.ID,
		Root:        runtime.StateRoot(),
		Stdin:       stdin,
		Stdout:      stdout,
		Stderr:      errOut,
		Meta:        runtime.Meta{Args: sb.req.Args, Workspace: sb.policy.Workspace},
		Notify:      rep.note,
		Proxy:       sb.proxy,
		Timeout:     sb.policy.Limits.Timeout,
		OutputLimit: sb.policy.Limits.OutputLimit,
		Ignore:      runtime.Ignore(sb.policy.Sandbox.IgnoreViolations),
		Stats: func(u runtime.Usage) {
			if cmd.Bool("stats") {
				fmt.Fprintf(w, "cordon: %s\n", u)
			}
		},
	}
}

// proxyConfig is the network proxy of a run under the policy, nil when the
// policy allows no network at all; the ask command, if any, talks on
// stderr, and env (the command's, which is cordon's caller's) gives the
// upstream proxy when the settings name none (HTTP_PROXY, ...).
func proxyConfig(p *policy.Policy, env []string, stderr io.Writer) (*netproxy.Config, error) {
	if !spec.Proxied(p) {
		return nil, nil
	}
	n := p.Network
	cfg := &netproxy.Config{
		AllowedDomains: n.AllowedDomains, DeniedDomains: n.DeniedDomains, DeniedReasons: n.DeniedDomainReasons,
		StripResponseHeaders: n.StripResponseHeaders, RequireHostMatch: n.RequireHostMatch, RefuseOpaqueTunnels: n.RefuseOpaqueTunnels,
	}
	for _, s := range n.DeniedResolvedAddresses {
		pf, err := netip.ParsePrefix(s)
		if err != nil {
			a, aerr := netip.ParseAddr(s)
			if aerr != nil {
				return nil, fmt.Errorf("sandbox.network.deniedResolvedAddresses: %q is not an address or range", s)
			}
			pf = netip.PrefixFrom(a, a.BitLen())
		}
		cfg.DeniedAddresses = append(cfg.DeniedAddresses, pf)
	}
	if n.ExternalHTTPProxyPort != 0 {
		cfg.ExternalHTTP = "127.0.0.1:" + strconv.Itoa(n.ExternalHTTPProxyPort)
	}
	if n.ExternalSOCKSProxyPort != 0 {
		cfg.ExternalSOCKS = "127.0.0.1:" + strconv.Itoa(n.ExternalSOCKSProxyPort)
	}
	getenv := func(name string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], name+"="); ok {
				return v
			}
		}
		return ""
	}
	up, warnings, err := netproxy.ResolveUpstream(n.ParentProxy.HTTP, n.ParentProxy.HTTPS, n.ParentProxy.NoProxy, getenv)
	if err != nil {
		return nil, fmt.Errorf("sandbox.network.%w", err)
	}
	for _, w := range warnings {
		fmt.Fprintf(stderr, "cordon: warning: %s\n", w)
	}
	if m := n.MitmProxy; m != nil {
		if up == nil {
			up = &netproxy.Upstream{}
		}
		up.Sockets = []netproxy.SocketProxy{{Path: m.SocketPath, Domains: m.Domains}}
	}
	cfg.Upstream = up
	if t := n.TLSTerminate; t != nil {
		// the CA comes with the masked credentials' (maskCredentials)
		cfg.Terminate = &netproxy.Termination{Exclude: t.ExcludeDomains, MaxTunnels: t.MaxTunnels, HandshakeTimeout: t.HandshakeTimeout}
	}
	if n.AskCommand != "" {
		cfg.Ask = &netproxy.AskCommand{Path: n.AskCommand, Stderr: stderr}
	}
	return cfg, nil
}
