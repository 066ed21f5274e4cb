package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v3"

	"cordon.dev/cordon/netproxy"
	"cordon.dev/cordon/netproxy/mask"
)

// proxyCommand is "cordon proxy": the filtering proxy alone, in the
// foreground, for inspection.
func proxyCommand() *cli.Command {
	return &cli.Command{
		Name:  "proxy",
		Usage: "run the network filtering proxy alone, in the foreground, logging every decision on stderr",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "listen-http", Value: net.JoinHostPort("127.0.0.1", strconv.Itoa(netproxy.DefaultHTTPPort)), Usage: "address of the HTTP proxy (CONNECT and absolute-form requests)"},
			&cli.StringFlag{Name: "listen-socks", Value: net.JoinHostPort("127.0.0.1", strconv.Itoa(netproxy.DefaultSOCKSPort)), Usage: "address of the SOCKS5 proxy (empty: none)"},
			&cli.StringSliceFlag{Name: "allow-domain", Usage: "allow a destination: example.com, *.example.com, 192.0.2.1, [2001:db8::1], each with an optional :port"},
			&cli.StringSliceFlag{Name: "deny-domain", Usage: "deny a destination (checked before the allowed ones)"},
			&cli.StringFlag{Name: "ask-command", Usage: "a program asked about destinations neither list matches (JSON on stdin and stdout)"},
			&cli.StringFlag{Name: "ask-socket", Usage: "a unix socket asked about destinations neither list matches (one JSON line each way)"},
			&cli.DurationFlag{Name: "ask-timeout", Value: time.Minute, Usage: "how long a question may take before it counts as a refusal"},
			&cli.StringSliceFlag{Name: "mask", Usage: "mask the variable `NAME=HOST[,HOST...]` of this environment: clients send the fake it prints, the proxy puts the real value into requests to HOST (TLS to it terminated); repeatable"},
			&cli.StringFlag{Name: "trust-bundle", Usage: "with --mask: write what clients must trust to `FILE` (the proxy's CA, then this host's roots)"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return fmt.Errorf("proxy takes no arguments (got %q)", cmd.Args().First())
			}
			cfg := netproxy.Config{
				Run:            "proxy",
				AllowedDomains: cmd.StringSlice("allow-domain"),
				DeniedDomains:  cmd.StringSlice("deny-domain"),
				AskTimeout:     cmd.Duration("ask-timeout"),
				OnDecision: func(d netproxy.Decision) {
					fmt.Fprintf(stderr, "%s %s\n", time.Now().Format("15:04:05.000"), d)
				},
			}
			switch a, s := cmd.String("ask-command"), cmd.String("ask-socket"); {
			case a != "" && s != "":
				return errors.New("--ask-command and --ask-socket exclude each other")
			case a != "":
				cfg.Ask = &netproxy.AskCommand{Path: a, Stderr: stderr}
			case s != "":
				cfg.Ask = &netproxy.AskSocket{Path: s}
			}
			if err := proxyMasks(cmd, &cfg); err != nil {
				return err
			}
			p, err := netproxy.New(cfg)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
			defer stop()
			var ls []net.Listener
			for _, f := range []struct{ flag, what string }{{"listen-http", "http"}, {"listen-socks", "socks5"}} {
				addr := cmd.String(f.flag)
				if addr == "" {
					continue
				}
				l, err := net.Listen("tcp", addr)
				if err != nil {
					for _, l := range ls {
						l.Close()
					}
					return fmt.Errorf("--%s: %w", f.flag, err)
				}
				ls = append(ls, l)
				fmt.Fprintf(stderr, "cordon proxy: %s on %s\n", f.what, l.Addr())
			}
			if len(ls) == 0 {
				return errors.New("nothing to listen on (--listen-http and --listen-socks are empty)")
			}
			errs := make(chan error, len(ls))
			for _, l := range ls {
				go func() { errs <- p.Serve(l) }()
			}
			select {
			case <-ctx.Done():
				p.Close()
				return nil
			case err := <-errs:
				p.Close()
				return err
			}
		},
	}
}

// proxyMasks sets up cordon proxy's --mask flags: the secrets, the CA
// and the trust bundle; each fake, and each use of a secret, is said on
// stderr.
func proxyMasks(cmd *cli.Command, cfg *netproxy.Config) error {
	masks, bundle := cmd.StringSlice("mask"), cmd.String("trust-bundle")
	if len(masks) == 0 {
		if bundle != "" {
			return errors.New("--trust-bundle is for --mask")
		}
		return nil
	}
	if bundle == "" {
		return errors.New("--mask needs --trust-bundle FILE: the clients must trust the proxy's CA")
	}
	set := mask.New(mask.Options{})
	for _, m := range masks {
		name, hosts, ok := strings.Cut(m, "=")
		if !ok || name == "" || hosts == "" {
			return fmt.Errorf("--mask %q: want NAME=HOST[,HOST...]", m)
		}
		value, ok := os.LookupEnv(name)
		if !ok || value == "" {
			return fmt.Errorf("--mask %s: the variable is not set", name)
		}
		match, err := injectHosts(strings.Split(hosts, ","))
		if err != nil {
			return fmt.Errorf("--mask %s: %w", name, err)
		}
		fake, err := set.Mask(mask.Rule{Name: "env " + name, Hosts: match}, value)
		if err != nil {
			return fmt.Errorf("--mask %s: %w", name, err)
		}
		fmt.Fprintf(stderr, "cordon proxy: %s masked for %s: %s=%s\n", name, hosts, name, fake)
	}
	ca, err := processCA()
	if err != nil {
		return fmt.Errorf("TLS termination: %w", err)
	}
	if err := os.WriteFile(bundle, ca.TrustBundle(), 0o644); err != nil {
		return fmt.Errorf("--trust-bundle: %w", err)
	}
	cfg.Mask, cfg.CA = set, ca
	cfg.OnCredential = func(u netproxy.CredentialUse) {
		what := "kept " + u.Name + " from"
		if u.Substituted {
			what = "put " + u.Name + "'s real value into a request to"
		}
		fmt.Fprintf(stderr, "%s %s %s\n", time.Now().Format("15:04:05.000"), what, net.JoinHostPort(u.Host, strconv.Itoa(u.Port)))
	}
	return nil
}

// proxyConnectCommand is "cordon proxy-connect": the ssh ProxyCommand used
// inside the sandbox, where there is no socat or nc.
func proxyConnectCommand() *cli.Command {
	return &cli.Command{
		Name:      "proxy-connect",
		Usage:     "connect stdin and stdout to HOST:PORT through the sandbox's proxy (an ssh ProxyCommand)",
		ArgsUsage: "HOST PORT",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "proxy", Usage: "the HTTP proxy's address (default: from $https_proxy or $HTTPS_PROXY, else 127.0.0.1:3128)"},
			&cli.DurationFlag{Name: "timeout", Value: 30 * time.Second, Usage: "how long connecting may take"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() != 2 {
				return errors.New("usage: cordon proxy-connect [--proxy ADDR] HOST PORT")
			}
			host := cmd.Args().Get(0)
			port, err := strconv.Atoi(cmd.Args().Get(1))
			if err != nil || port < 1 || port > 65535 {
				return fmt.Errorf("bad port %q", cmd.Args().Get(1))
			}
			proxyAddr := cmd.String("proxy")
			if proxyAddr == "" {
				proxyAddr = proxyFromEnv()
			}
			dctx, cancel := context.WithTimeout(ctx, cmd.Duration("timeout"))
			c, err := netproxy.DialConnect(dctx, proxyAddr, host, port)
			cancel()
			if err != nil {
				return fmt.Errorf("proxy-connect %s: %w", net.JoinHostPort(host, strconv.Itoa(port)), err)
			}
			return netproxy.Pipe(c, os.Stdin, os.Stdout)
		},
	}
}

// proxyFromEnv is the host:port of $https_proxy or $HTTPS_PROXY, or the
// default port on 127.0.0.1.
func proxyFromEnv() string {
	for _, k := range []string{"https_proxy", "HTTPS_PROXY"} {
		if u, err := url.Parse(os.Getenv(k)); err == nil && u.Scheme == "http" && u.Host != "" {
			if u.Port() == "" {
				return net.JoinHostPort(u.Hostname(), "80")
			}
			return u.Host
		}
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(netproxy.DefaultHTTPPort))
}
