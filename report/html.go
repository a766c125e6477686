package report

import (
	"fmt"
	"html/template"
	"io"
	"sync"

	"github.com/gpuleak/gpuleak/report/chart"
)

// FormatHTML is one self-contained HTML page with SVG charts: the daily
// report (gpuleak report).
const FormatHTML Format = "html"

func init() {
	register(FormatHTML, Writer{Order: 70, Help: "one self-contained page with charts", Daily: writeDailyHTML})
}

// writeDailyHTML writes the daily report as one self-contained HTML page:
// inline CSS, inline SVG charts (report/chart), no scripts, no fonts or
// anything else fetched at view time; a viewport and responsive CSS for
// phones.
func writeDailyHTML(w io.Writer, d *Daily, _ Options) error {
	v := newDailyView(d)
	page := htmlPage{V: v}
	for i := range v.Leaks {
		l := v.Leaks[i].S
		var ss []chart.Series
		for _, c := range l.Curves {
			ss = append(ss, chart.Series{Label: c.Label, X: c.AtUs, Y: c.Bytes})
		}
		page.LeakCharts = append(page.LeakCharts, svgOrNote(func() ([]byte, error) {
			if len(ss) == 0 {
				return nil, nil
			}
			return chart.Lines("live bytes at "+leakSiteTitle(l)+" over the trace", "live", ss, true, 17, 8)
		}))
	}
	for _, o := range v.OOMs {
		page.OOMCharts = append(page.OOMCharts, barsChart("memory at the OOM", o.Bars))
	}
	for i := range v.GPUs {
		g := v.GPUs[i].G
		var ss []chart.Series
		for _, c := range g.Curves {
			ss = append(ss, chart.Series{Label: c.Label, X: c.AtUs, Y: c.Bytes})
		}
		page.GPUCharts = append(page.GPUCharts, svgOrNote(func() ([]byte, error) {
			if len(ss) == 0 {
				return nil, nil
			}
			return chart.Lines("used memory on "+g.GPU, "used", ss, true, 17, 8)
		}))
	}
	for _, f := range v.Frag {
		page.FragCharts = append(page.FragCharts, barsChart("segments' memory", f.Bars))
	}
	return dailyTemplate().Execute(w, page)
}

type htmlPage struct {
	V                                            *dailyView
	LeakCharts, OOMCharts, GPUCharts, FragCharts []template.HTML
}

func barsChart(title string, bars []barValue) template.HTML {
	return svgOrNote(func() ([]byte, error) {
		if len(bars) == 0 {
			return nil, nil
		}
		bs := make([]chart.Bar, len(bars))
		for i, b := range bars {
			bs[i] = chart.Bar{Label: b.Label, Bytes: b.Bytes}
		}
		return chart.Bars(title, bs, 17, 1.6+0.7*float64(len(bs)))
	})
}

// svgOrNote is the chart's SVG (made by package chart, whose text is
// escaped), or a note saying why there is none.
func svgOrNote(draw func() ([]byte, error)) template.HTML {
	svg, err := draw()
	switch {
	case err != nil:
		return template.HTML(`<p class="note">` + template.HTMLEscapeString(fmt.Sprintf("no chart: %v", err)) + `</p>`)
	case svg == nil:
		return ""
	}
	return template.HTML(`<div class="chart">` + string(svg) + `</div>`)
}

// dailyTemplate is parsed on first use: at start it cost every run 0.5 ms.
var dailyTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("daily").Parse(dailyHTML))
})

const dailyHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.V.Title}}</title>
<style>
:root { --fg:#1b1f24; --muted:#5b636e; --line:#d8dde3; --alert:#b3261e; --bg:#ffffff; --card:#f4f6f8; }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1100px; padding: 12px 16px 48px; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Liberation Sans", sans-serif; color: var(--fg); background: var(--bg); }
h1 { font-size: 1.5em; margin: .4em 0 .1em; }
h2 { font-size: 1.2em; margin: 1.6em 0 .4em; padding-bottom: .2em; border-bottom: 1px solid var(--line); }
h3 { font-size: 1em; margin: 1.1em 0 .3em; overflow-wrap: anywhere; }
p, li { overflow-wrap: anywhere; }
.muted, .note { color: var(--muted); }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr)); gap: 8px; margin: 12px 0; }
.card { background: var(--card); border-radius: 6px; padding: 8px 10px; }
.card b { display: block; font-size: 1.25em; }
.card.alert b { color: var(--alert); }
.chart svg { width: 100%; max-width: 720px; height: auto; display: block; }
.item { border-left: 3px solid var(--line); padding: 2px 0 2px 10px; margin: 10px 0; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: .9em; }
th, td { text-align: left; padding: 3px 8px; border-bottom: 1px solid var(--line); white-space: nowrap; }
code { font-size: .9em; overflow-wrap: anywhere; }
@media (max-width: 600px) { body { font-size: 14px; padding: 8px; } .cards { grid-template-columns: 1fr 1fr; } }
</style>
</head>
<body>
<h1>{{.V.Title}}</h1>
<p class="muted">{{.V.Window}} · {{.V.D.Tool.Name}} {{.V.D.Tool.Version}}</p>

<h2 id="summary">Summary</h2>
<div class="cards">{{range .V.Cards}}<div class="card{{if .Alert}} alert{{end}}"><b>{{.Value}}</b>{{.Label}}</div>{{end}}</div>
{{if .V.Worst}}<ol>{{range .V.Worst}}<li>{{.}}</li>{{end}}</ol>{{else}}<p>{{.V.Nothing}}</p>{{end}}
{{if .V.Baseline}}
<h2 id="baseline">Since {{.V.D.Baseline.Path}}</h2>
<ul>{{range .V.Baseline}}<li>{{.}}</li>{{end}}</ul>
{{end}}
<h2 id="leaks">Leaks by site across jobs</h2>
{{if not .V.Leaks}}<p>{{.V.NoLeak}}</p>{{end}}
{{range $i, $l := .V.Leaks}}<div class="item">
<h3>{{$l.Title}}</h3>
{{range $l.Lines}}<p>{{.}}</p>{{end}}
{{if $l.Stack}}<p class="muted"><code>{{$l.Stack}}</code></p>{{end}}
{{index $.LeakCharts $i}}
</div>{{end}}

<h2 id="sanitizer-errors">compute-sanitizer errors (not leaks)</h2>
{{if not .V.Errors}}<p>{{.V.NoErrors}}</p>{{end}}
{{range .V.Errors}}<div class="item">
<h3>{{.Title}}</h3>
{{range .Lines}}<p>{{.}}</p>{{end}}
{{if .Stack}}<p class="muted"><code>{{.Stack}}</code></p>{{end}}
</div>{{end}}

<h2 id="ooms">Out-of-memory errors</h2>
{{if not .V.OOMs}}<p>{{.V.NoOOM}}</p>{{end}}
{{range $i, $o := .V.OOMs}}<div class="item">
<h3>{{$o.Title}}</h3>
{{range $o.Lines}}<p>{{.}}</p>{{end}}
{{index $.OOMCharts $i}}
</div>{{end}}
{{if .V.Undescribed}}<ul>{{range .V.Undescribed}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .V.OOMDays}}<h3>OOMs by day and cause</h3>
<div class="scroll"><table><tr><th>date</th><th>cause</th><th>OOMs</th></tr>
{{range .V.OOMDays}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{end}}</table></div>{{end}}

<h2 id="trends">GPU and process memory (NVML)</h2>
{{if not .V.GPUs}}<p>{{.V.NoGPU}}</p>{{end}}
{{range $i, $g := .V.GPUs}}<div class="item">
<h3>{{$g.Title}}</h3>
{{range $g.Lines}}<p>{{.}}</p>{{end}}
{{index $.GPUCharts $i}}
<div class="scroll"><table><tr><th>series</th><th>trend</th><th>last</th><th>peak</th><th>slope</th><th>time to OOM</th><th>log</th></tr>
{{range $g.Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{end}}</table></div>
</div>{{end}}

<h2 id="fragmentation">Fragmentation</h2>
{{if not .V.Frag}}<p>{{.V.NoFrag}}</p>{{end}}
{{range $i, $f := .V.Frag}}<div class="item">
<h3>{{$f.Title}}</h3>
{{range $f.Lines}}<p>{{.}}</p>{{end}}
{{index $.FragCharts $i}}
</div>{{end}}

<h2 id="unreadable">Unreadable inputs</h2>
{{if not .V.D.Unreadable}}<p>None.</p>{{end}}
<ul>{{range .V.D.Unreadable}}<li><code>{{.Path}}</code>: {{.Error}}</li>{{end}}</ul>
{{if .V.D.ReadInPart}}<h2 id="read-in-part">Inputs read in part</h2>
<p>Lines of these inputs could not be read and were skipped; what is shown of them comes from the rest.</p>
<ul>{{range .V.D.ReadInPart}}<li><code>{{.Path}}</code>: read in part: {{.Error}}</li>{{end}}</ul>{{end}}
{{if .V.InputWarnings}}<h2 id="input-warnings">Inputs' warnings</h2>
<p>What reading and analysing these inputs warned of: the evidence and the limits of what this page says of them.</p>
{{range .V.InputWarnings}}<details><summary><code>{{.Path}}</code> <span class="muted">({{.Title}})</span></summary>
<ul>{{range .Lines}}<li>{{.}}</li>{{end}}</ul></details>{{end}}{{end}}
<h2 id="skipped">Skipped files</h2>
{{if not .V.D.Skipped}}<p>None.</p>{{end}}
<ul>{{range .V.D.Skipped}}<li><code>{{.Path}}</code>: {{.Reason}}</li>{{end}}</ul>
{{if .V.D.Warnings}}<h2 id="warnings">Warnings</h2><ul>{{range .V.D.Warnings}}<li>{{.}}</li>{{end}}</ul>{{end}}
</body>
</html>
`
