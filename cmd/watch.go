package cmd

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/gpuleak/gpuleak/analyze/trend"
	"github.com/gpuleak/gpuleak/capture"
	"github.com/gpuleak/gpuleak/internal/startgc"
	"github.com/gpuleak/gpuleak/live"
)

// WatchOptions are the flags and dependencies of "gpuleak watch".
type WatchOptions struct {
	IO      *IOStreams
	Version string

	Interval   time.Duration
	Duration   time.Duration
	Window     time.Duration
	GPUs       []int
	PID        int64
	Output     string
	Prometheus string
	Textfile   string

	// Open opens the sampling source (capture.Open; tests inject a fake).
	Open func(capture.Config) (capture.Source, error)
	// Notify subscribes c to the signals that stop watching.
	Notify func(c chan<- os.Signal) (stop func())
}

// NewCmdWatch builds "gpuleak watch". runF replaces the run function in
// tests; nil runs runWatch.
func NewCmdWatch(ios *IOStreams, version string, runF func(*WatchOptions) error) *cobra.Command {
	opts := &WatchOptions{IO: ios, Version: version, Open: capture.Open, Notify: notifySignals}
	c := &cobra.Command{
		Use:   "watch",
		Short: "A live view of GPU memory through NVML: per GPU and process, used memory, trend, rate and time to OOM",
		Long: `Watch samples GPU memory through NVML (as gpuleak capture does) and shows,
per GPU and per process, the used memory, a sparkline, the trend class and
rate, and the time to out-of-memory, over the last --window of samples (the
analysis of gpuleak trend). Growing series are marked as leak suspects.

On a terminal the view refreshes every --interval; keys: q quits, g sorts by
GPU, u by used memory, r by rate, o by time to OOM. When standard output is
not a terminal, it prints one line per interval instead. Where computing the
trends takes more than a tenth of the time between refreshes (a long window
at a short interval), refreshes are spaced out; every sample is still taken.

--prometheus ADDR serves the gauges at http://ADDR/metrics (loopback by
default: give an explicit address such as 0.0.0.0:9400 to serve others);
--textfile PATH writes them for node_exporter's textfile collector,
replaced atomically (rename) every interval. -o also writes the samples,
as capture does. Needs a gpuleak built with NVML (make build-nvml).

` + exitCodesHelp("", exitHelp{ExitOK, "watching stopped as asked (q, SIGINT, SIGTERM or --duration)"},
			exitHelp{ExitInput, "bad usage, a build without NVML, or no NVML library or driver (nothing is sampled then)"},
			exitHelpSamples),
		Example: `  gpuleak watch
  gpuleak watch --gpu 0 --interval 500ms --window 5m
  gpuleak watch --prometheus 127.0.0.1:9400 > /dev/null     # an exporter, one line per interval
  gpuleak watch --textfile /var/lib/node_exporter/gpuleak.prom --interval 15s`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runWatch(opts)
		},
	}
	f := c.Flags()
	f.DurationVar(&opts.Interval, "interval", time.Second, "time between samples and refreshes (at least 10ms)")
	f.DurationVar(&opts.Duration, "duration", 0, "stop after this long (default: until q, SIGINT or SIGTERM)")
	f.DurationVar(&opts.Window, "window", 10*time.Minute, "the trend is computed over the samples of this last period (at most 3600 samples)")
	f.IntSliceVar(&opts.GPUs, "gpu", nil, "NVML indices of the GPUs to watch (default all)")
	f.Int64Var(&opts.PID, "pid", 0, "show only this process and its children (GPUs are always shown)")
	f.StringVarP(&opts.Output, "output", "o", "", "also write the samples to this JSON lines file")
	f.StringVar(&opts.Prometheus, "prometheus", "", "serve Prometheus gauges at this address (host:port; a bare :port means 127.0.0.1:port)")
	f.StringVar(&opts.Textfile, "textfile", "", "write Prometheus gauges to this file for node_exporter's textfile collector (atomically)")
	return c
}

// maxWindowTicks bounds the samples the live trend is computed over.
const maxWindowTicks = 3600

// maxRefreshLoad: a refresh (the trend over the window, the screen) waits
// until this many times the last refresh's time has passed, so that a long
// window at a short interval costs at most about a tenth of a core; the
// samples are all taken and written regardless.
const maxRefreshLoad = 10

func runWatch(opts *WatchOptions) error {
	startgc.Settle(false) // many inputs, or a long run: the collector's default
	if opts.Interval < 10*time.Millisecond {
		return usageErrorf("--interval must be at least 10ms, not %v", opts.Interval)
	}
	if opts.Window < 2*opts.Interval {
		return usageErrorf("--window (%v) must cover at least two intervals", opts.Window)
	}
	if opts.Duration < 0 || opts.PID < 0 {
		return usageErrorf("--duration and --pid must not be negative")
	}
	addr := prometheusAddr(opts.Prometheus)
	src, err := openSource(opts.Open, capture.Config{GPUs: opts.GPUs})
	if err != nil {
		return err
	}
	defer src.Close()

	metrics := live.NewMetrics()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if addr != "" {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return usageErrorf("--prometheus %s: %v", opts.Prometheus, err)
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", metrics)
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		go srv.Serve(ln)
		defer srv.Close()
		fmt.Fprintf(opts.IO.ErrOut, "gpuleak: Prometheus gauges at http://%s/metrics\n", ln.Addr())
	}

	var w *capture.Writer
	if opts.Output != "" {
		w = capture.NewWriter(opts.Output, capture.Rotation{})
	} else {
		w = capture.NewStreamWriter(io.Discard)
	}
	defer w.Close()

	sigs := make(chan os.Signal, 2)
	stopNotify := opts.Notify(sigs)
	defer stopNotify()
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-ctx.Done():
		}
	}()

	// On a terminal: raw mode for keys, the screen redrawn each tick.
	var sortKey atomic.Int32
	tty := false
	if f, ok := opts.IO.Out.(*os.File); ok && opts.IO.OutTTY {
		if in, ok := opts.IO.In.(*os.File); ok && term.IsTerminal(int(in.Fd())) {
			if old, err := term.MakeRaw(int(in.Fd())); err == nil {
				tty = true
				defer term.Restore(int(in.Fd()), old)
				go readKeys(in, &sortKey, cancel)
				fmt.Fprint(f, "\x1b[?1049h\x1b[?25l") // alternate screen, no cursor
				defer fmt.Fprint(f, "\x1b[?25h\x1b[?1049l")
			}
		}
	}

	win := live.NewWindow(min(int(opts.Window/opts.Interval), maxWindowTicks))
	ropt := capture.RunOptions{Interval: opts.Interval, Duration: opts.Duration}
	if opts.PID > 0 {
		ropt.Keep = capture.FollowFilter(capture.NewProcessTree(opts.PID), func(msg string) {
			fmt.Fprint(opts.IO.ErrOut, "gpuleak: "+msg+"\r\n") // \r: the terminal may be in raw mode
		})
	}
	var viewErr error
	var next time.Time // the next refresh: see refreshDue
	ropt.OnTick = func(samples []capture.GPUSample) {
		win.Add(samples)
		t0 := time.Now()
		if t0.Before(next) {
			return
		}
		defer func() { next = t0.Add(maxRefreshLoad * time.Since(t0)) }()
		res, err := win.Trends("live", trend.Options{})
		if err != nil {
			viewErr = err
			cancel()
			return
		}
		rows := live.Rows(res)
		metrics.Update(rows)
		status := ""
		if opts.Textfile != "" {
			if err := metrics.WriteTextfile(opts.Textfile); err != nil {
				status = "textfile: " + err.Error()
			}
		}
		now := time.UnixMicro(samples[0].TimeUs)
		if tty {
			live.Sort(rows, live.SortKey(sortKey.Load()))
			var b strings.Builder
			b.WriteString("\x1b[H\x1b[2J")
			live.Screen(&b, rows, live.SortKey(sortKey.Load()), now, opts.Interval, win.Len(), status)
			io.WriteString(opts.IO.Out, b.String())
			return
		}
		fmt.Fprintln(opts.IO.Out, live.Line(rows, now))
		if status != "" {
			fmt.Fprintln(opts.IO.ErrOut, "gpuleak: "+status)
		}
	}
	_, err = capture.Run(ctx, src, w, ropt)
	if viewErr != nil {
		return fmt.Errorf("live trend: %w", viewErr)
	}
	return err
}

// prometheusAddr is where --prometheus listens: a bare ":PORT" (or
// "PORT") is loopback's; another host only when given.
func prometheusAddr(s string) string {
	if s == "" {
		return ""
	}
	if !strings.Contains(s, ":") {
		s = ":" + s
	}
	if strings.HasPrefix(s, ":") {
		return "127.0.0.1" + s
	}
	return s
}

// readKeys turns key presses into sort orders; q, Ctrl-C or Ctrl-D quits.
func readKeys(in io.Reader, key *atomic.Int32, quit func()) {
	b := make([]byte, 16)
	for {
		n, err := in.Read(b)
		if err != nil {
			quit()
			return
		}
		for _, c := range b[:n] {
			switch c {
			case 'q', 'Q', 3, 4:
				quit()
				return
			case 'g':
				key.Store(int32(live.ByGPU))
			case 'u':
				key.Store(int32(live.ByUsed))
			case 'r':
				key.Store(int32(live.ByRate))
			case 'o':
				key.Store(int32(live.ByOOM))
			}
		}
	}
}
