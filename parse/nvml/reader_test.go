package nvml

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuleak/gpuleak/parse"
)

const fixtures = "../../testdata/nvml/"

func us(t time.Time) int64 { return t.UnixMicro() }

func utc(y int, mo time.Month, d, h, mi, s, ms int) int64 {
	return us(time.Date(y, mo, d, h, mi, s, ms*1e6, time.UTC))
}

func mib(n int64) int64 { return n * MiB }

func val(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}

// peak returns the largest used_bytes of device rows and the time it was
// first reached.
func peak(rows []row) (int64, int64) {
	var best, at int64 = -1, 0
	for _, r := range rows {
		if r.PID == nil && r.Used != nil && *r.Used > best {
			best, at = *r.Used, r.TimeUs
		}
	}
	return best, at
}

// Every real log parses, into the layout, row counts and conventions its
// provenance (testdata/README.md) implies.
func TestFixtures(t *testing.T) {
	tests := []struct {
		file   string
		format parse.Format
		rows   int64
		// instants: the sampling instants (Metadata.Instants), what the
		// report calls the log's samples: one per table, tick or scrape,
		// whatever its GPUs and processes; pmon's ticks without a process
		// count.
		instants int64
		clock    Clock
		// conventions: the set of used_convention values, sorted; a
		// table whose banner names a driver before R510 (325 to 450
		// here) holds no reservation in its figures (left out of used
		// and total alike): includes-reserved-unknown, whose used is the
		// logged value (was excludes-reserved, which says total counts
		// a reservation used leaves out).
		conventions string
	}{
		// 459 samples: ../shared/fixtures/README.md; the file has a header and 459 rows.
		{"query_gpu.csv", FormatQueryGPU, 459, 459, ClockAbsolute, "excludes-reserved"},
		{"query_gpu_noheader_nounits.csv", FormatQueryGPU, 313, 313, ClockAbsolute, "excludes-reserved"},
		// 127 lines: the header and 126 rows.
		{"query_gpu_reordered.csv", FormatQueryGPU, 126, 126, ClockAbsolute, "excludes-reserved"},
		{"query_apps.csv", FormatQueryApps, 295, 295, ClockAbsolute, "process"},
		{"query_apps_noheader.csv", FormatQueryApps, 68, 58, ClockAbsolute, "process"},
		// 122 lines, of which 6 are the header pair repeated three times.
		{"dmon.txt", FormatDmon, 116, 116, ClockAbsolute, "excludes-reserved"},
		{"dmon_mu.txt", FormatDmon, 64, 64, ClockRowOrder, "excludes-reserved"},
		// 40 ticks of two GPUs; GPU 1's last 10 rows read "-" in every
		// column (lost): rows without used memory, as before.
		{"dmon_gpu_lost_dashes.txt", FormatDmon, 80, 40, ClockAbsolute, "excludes-reserved"},
		// pmon of index 0 over h46b_gpu_swap_run.csv's hour: one process
		// a tick, 120 ticks.
		{"u47b_gpu_swap_pmon.txt", FormatPmon, 120, 120, ClockAbsolute, "process"},
		// nvidia-smi's lost handle line, then 40 ticks of GPU 0 alone.
		{"dmon_lost_handle_first.txt", FormatDmon, 40, 40, ClockAbsolute, "excludes-reserved"},
		// pmon rows with pid "-" (no process) give no sample.
		{"pmon.txt", FormatPmon, 71, 116, ClockAbsolute, "process"},
		{"pmon_mu_T.txt", FormatPmon, 32, 61, ClockTimeOfDay, "process"},
		// One device row per line plus one row per listed process.
		{"pynvml.jsonl", FormatPynvmlJSONL, 461 + 295, 461, ClockAbsolute, "includes-reserved,process"},
		{"pynvml_2.jsonl", FormatPynvmlJSONL, 250 + 138, 250, ClockAbsolute, "includes-reserved,process"},
		// pynvml.jsonl's records 201-230 with record 213 cut at 70 bytes
		// before it whole (a sampler killed mid-line, restarted): 30
		// records, 7 processes among them; the cut line alone skipped (it
		// took the 18 records after it).
		{"pynvml_cut_record_mid_log.jsonl", FormatPynvmlJSONL, 30 + 7, 30, ClockAbsolute, "includes-reserved,process"},
		// The H200 recording of issue 12 (testdata/README.md): 167 --query-gpu
		// rows, 122 --query-compute-apps rows, dmon once a second over 43 s,
		// 31 pmon rows of pid 878, 166 pynvml ticks with 122 process rows.
		{"leak_exit_query_gpu.csv", FormatQueryGPU, 167, 167, ClockAbsolute, "excludes-reserved"},
		{"leak_exit_query_apps.csv", FormatQueryApps, 122, 122, ClockAbsolute, "process"},
		{"leak_exit_dmon_mu_TD.txt", FormatDmon, 43, 43, ClockAbsolute, "excludes-reserved"},
		{"leak_exit_pmon_m_TD.txt", FormatPmon, 31, 42, ClockAbsolute, "process"},
		{"leak_exit_pynvml.jsonl", FormatPynvmlJSONL, 166 + 122, 166, ClockAbsolute, "includes-reserved,process"},
		// One GPU and one process; -q: one GPU with Reserved.
		{"leak_exit_nvidia_smi_default.txt", FormatNvidiaSmiText, 2, 1, ClockAbsolute, "excludes-reserved,process"},
		{"leak_exit_nvidia_smi_q_memory.txt", FormatNvidiaSmiText, 1, 1, ClockAbsolute, "excludes-reserved"},
		// Public pastes: two GPUs; one GPU, cut after its memory row.
		{"pub_pytorch910_nvidia_smi.txt", FormatNvidiaSmiText, 2, 1, ClockAbsolute, "includes-reserved-unknown"},
		// pytorch/pytorch#4031's table as the issue quotes it ("> "), its
		// Processes box cut after the header: one GPU (driver 384.98, as pytorch910's).
		{"pub_pytorch4031_quoted_table.txt", FormatNvidiaSmiText, 1, 1, ClockAbsolute, "includes-reserved-unknown"},
		// pid 571's memory cut to "12339...": kept, memory unknown.
		{"s31_nvidia_smi_truncated_proc.txt", FormatNvidiaSmiText, 3, 1, ClockAbsolute, "excludes-reserved,process"},
		{"pub_sublime2184_nvidia_smi.txt", FormatNvidiaSmiText, 1, 1, ClockAbsolute, "includes-reserved-unknown"},
		// --query-gpu without timestamp, index or uuid after "~ $  time
		// nvidia-smi ...", with time's report after it: two GPUs.
		{"pub_bpytop26_query_gpu_no_index.txt", FormatQueryGPU, 2, 1, ClockRowOrder, "excludes-reserved"},
		// Two GPUs, cut inside the second's memory cell after its
		// figures ("0MiB / 81920Mi"): both are read.
		{"pub_gpuoperator348_cut_gpu_row.txt", FormatNvidiaSmiText, 2, 1, ClockAbsolute, "excludes-reserved"},
		// One gpustat line with a process (pub_gpustat130_two_outputs.txt, of
		// two layouts, has its own test).
		{"pub_gpustat97_line.txt", FormatGpustatText, 2, 1, ClockRowOrder, "includes-reserved-unknown,process"},
		// gpustat#95: GPUs 0-3, GPU 4's row cut (f47n_test.go); its
		// processes "jfx(?M)" have no pid and are not read.
		{"pub_gpustat95_cut_row.txt", FormatGpustatText, 4, 1, ClockAbsolute, "includes-reserved-unknown"},
		// pmon's header twice, without fb then with it, and 10 process
		// rows of one tick (f47n_test.go).
		{"pub_sonar_pmon_two_headers.txt", FormatPmon, 10, 1, ClockRowOrder, "process"},
		// An -q -x excerpt from inside <clocks_event_reasons> to its
		// GPU's <bar1_memory_usage>: one GPU, no index, no time.
		{"pub_telegraf5546_xml_excerpt.xml", FormatNvidiaSmiXML, 1, 1, ClockRowOrder, "excludes-reserved"},
		// A command with noheader, a label, two rows (f47n_test.go).
		{"field/wings_noheader_command_label_rows.txt", FormatQueryGPU, 2, 1, ClockRowOrder, "excludes-reserved"},
		// A Processes box alone, of MIG instances: 7 processes.
		{"pub_nvitop8_procs_mig_instances.txt", FormatNvidiaSmiText, 7, 1, ClockRowOrder, "process"},
		// One -q GPU section of 4 attached: GPU 0 and 2 processes.
		{"pub_sonar_q_one_of_four.txt", FormatNvidiaSmiText, 3, 1, ClockAbsolute, "excludes-reserved,process"},
		// gpuleak capture (NVML memory info v2: used leaves the reservation
		// out): 270 and 25 ticks, the leaking process listed in 220 and 21
		// (testdata/README.md).
		{"capture_h200_100ms.jsonl", FormatPynvmlJSONL, 270 + 220, 270, ClockAbsolute, "excludes-reserved,process"},
		{"capture_h200_1s.jsonl", FormatPynvmlJSONL, 25 + 21, 25, ClockAbsolute, "excludes-reserved,process"},
		// Field pastes (testdata/README.md, "Field pastes of nvidia-smi"):
		// the Processes box alone, with the GI and CI columns of a MIG
		// machine: its seven process rows (was refused).
		{"field/nvitop8_mig_processes.txt", FormatNvidiaSmiText, 7, 1, ClockRowOrder, "process"},
		// dmon -s pucvmet: four GPUs in one tick, fb among 18 columns.
		{"field/deepspeech178_dmon_pucvmet.txt", FormatDmon, 4, 1, ClockRowOrder, "excludes-reserved"},
		// -q of driver 550 on two H100 NVL, each "Processes : None": two GPUs.
		{"field/thamada_h100nvl_q_processes_none.txt", FormatNvidiaSmiText, 2, 1, ClockAbsolute, "excludes-reserved"},
		// s35's table with its two process rows N/A: four GPUs and the
		// two processes, their memory null.
		{"s35_nvidia_smi_na_procs.txt", FormatNvidiaSmiText, 6, 1, ClockAbsolute, "excludes-reserved,process"},
		// -q -d MEMORY,... of driver 375 (no Reserved line): one GPU.
		{"field/gnomeapplet356_q_d_memory_2017.txt", FormatNvidiaSmiText, 1, 1, ClockAbsolute, "includes-reserved-unknown"},
		// Driver 450's table, with its MIG M. row: one GPU.
		{"field/arborx565_table_450_mig_col.txt", FormatNvidiaSmiText, 1, 1, ClockAbsolute, "includes-reserved-unknown"},
		// dmon and pmon "Not supported on the device(s)" after "# nvidia-smi
		// dmon" (a root prompt), then the table of one GPU.
		{"field/keylase89_dmon_unsupported_table.txt", FormatNvidiaSmiText, 1, 1, ClockAbsolute, "includes-reserved-unknown"},
		// dcgmi dmon -e 203,204,155,150,310,311,252 -c 5 -d 1 on an RTX
		// 2080 Ti: five rows of GPU 0, FBUSD 0 (was refused as no known
		// format). Each row repeats GPU 0, so each is its own tick; FBUSD
		// is DCGM_FI_DEV_FB_USED, which leaves the reservation out.
		{"field/agihpc_dcgmi_dmon_rtx2080ti.txt", FormatDcgmiDmon, 5, 5, ClockRowOrder, "excludes-reserved"},
		// --query-gpu=name,memory.used,memory.total in a HAMi pod: one
		// row, then HAMi-core's two exit messages (TestTaggedMessages).
		{"field/hami_t4_query_gpu_msgs.txt", FormatQueryGPU, 1, 1, ClockRowOrder, "excludes-reserved"},
		// The same behind HAMi-core's start message (TestTaggedMessageFirst).
		{"field/hami_init_then_query_gpu_msgs.txt", FormatQueryGPU, 1, 1, ClockRowOrder, "excludes-reserved"},
		// Mila's Slurm epilog "GPU REPORT", indented 6 spaces as its docs
		// quote it: -q -d ACCOUNTING, then the table of two idle L40S
		// (TestAccountedProcesses).
		{"field/mila_slurm_gpu_report_accounting.txt", FormatNvidiaSmiText, 2, 1, ClockAbsolute, "excludes-reserved"},
		// A script's "# GPU memory log" line before nvidia-smi's CSV
		// (TestCommentLines): three rows of a V100.
		{"field/gpulog_comment_then_query_gpu.csv", FormatQueryGPU, 3, 3, ClockAbsolute, "excludes-reserved"},
		// A "before" and an "after" --query-gpu of eight H200s without
		// timestamps (cmd's TestTrendTwoSamplesStepAtEnd): two ticks.
		{"field/exp23_before_after_query_gpu.txt", FormatQueryGPU, 16, 2, ClockRowOrder, "excludes-reserved"},
		// dcgm-exporter on two A30s in MIG mode: FB_USED of six instances.
		{"field/dcgmexporter317_a30_mig_used.txt", FormatDCGMPrometheus, 6, 1, ClockRowOrder, "excludes-reserved"},
		// Windows tables (TCC/WDDM column): one GPU each; 512.78 has its
		// ctime line, 537.34 none.
		{"field/mineru_win_wddm_537_table.txt", FormatNvidiaSmiText, 1, 1, ClockRowOrder, "excludes-reserved"},
		// 512.78's six process rows show their memory as N/A: kept, memory null.
		{"field/cadesign_win_wddm_512_table_indented.txt", FormatNvidiaSmiText, 7, 1, ClockAbsolute, "excludes-reserved,process"},
		// A paste: --query-gpu (command over three lines, no timestamp) of
		// one GPU whose used + free (22403 + 215) falls 410 MiB short of
		// total (23028): the reservation left out; pmon without fb skipped.
		{"field/a10g_query_continued_then_pmon_no_fb.txt", FormatQueryGPU, 1, 1, ClockRowOrder, "excludes-reserved"},
		// Hunted in session 41 (testdata/README.md, "Sanitizer and NVML
		// pastes hunted in session 41"): driver 325.15's tables, whose
		// memory cells say "MB" (was: no used memory read), three GPUs
		// each, the second cut inside GPU 2's total.
		{"field/cbio39_table_325_mb_three_titans.txt", FormatNvidiaSmiText, 3, 1, ClockAbsolute, "includes-reserved-unknown"},
		{"field/cbio24_ssh_x11_warnings_table_mb_cut.txt", FormatNvidiaSmiText, 3, 1, ClockAbsolute, "includes-reserved-unknown"},
		// WSL tables (driver 526.98, 510.06), each cut; nvtop's "No GPU to
		// monitor." and prompts before the second.
		{"field/nvitop49_wsl_table_526_cut.txt", FormatNvidiaSmiText, 1, 1, ClockAbsolute, "excludes-reserved"},
		{"field/nvtop124_wsl_nvtop_then_table_cut.txt", FormatNvidiaSmiText, 1, 1, ClockAbsolute, "excludes-reserved"},
		{"field/numba5392_table_418_procs_row_cut.txt", FormatNvidiaSmiText, 3, 1, ClockAbsolute, "includes-reserved-unknown,process"},
		{"field/nvmolkit28_wsl_table_581_procs_header_cut.txt", FormatNvidiaSmiText, 1, 1, ClockAbsolute, "excludes-reserved"},
		{"field/gpustat130_gpustat_then_table_cut_gpu_box.txt", FormatGpustatText, 5, 2, ClockAbsolute, "excludes-reserved,includes-reserved-unknown"},
		// A Processes box (3 rows), a prompt, then a second table cut in
		// its header: the box is read, the cut said (was refused).
		{"field/chatglm1121_procs_box_then_table_cut_in_header.txt", FormatNvidiaSmiText, 3, 1, ClockRowOrder, "process"},
		// Windows 517.48, indented two spaces, no Processes box, cut in GPU
		// 1's second row (was refused: the indented banner not sniffed).
		{"field/wsl9134_win_wddm_517_two_gpus_indented_cut.txt", FormatNvidiaSmiText, 2, 1, ClockAbsolute, "excludes-reserved"},
		// Driver 390 in a container: two M40s, the Processes box cut.
		{"field/nvdocker759_table_390_two_m40_cut.txt", FormatNvidiaSmiText, 2, 1, ClockAbsolute, "includes-reserved-unknown"},
		// gpustat --debug of a GPU without process queries; gpustat's line
		// printed by Python's REPL (22°C).
		{"field/gpustat122_debug_not_supported.txt", FormatGpustatText, 1, 1, ClockAbsolute, "includes-reserved-unknown"},
		{"field/gpustat132_python_repr.txt", FormatGpustatText, 1, 1, ClockRowOrder, "includes-reserved-unknown"},
		// Header-less CSV after the command that names its fields.
		{"field/i3pystatus776_query_noheader_nounits_na_fan.txt", FormatQueryGPU, 1, 1, ClockRowOrder, "includes-reserved-unknown"},
		{"field/llamaswap782_query_apps_noheader_uuid_elided.txt", FormatQueryApps, 1, 1, ClockRowOrder, "process"},
		// A GPU's two rows quoted alone, power ERR!.
		{"field/azhpc77_table_rows_err_power_no_banner.txt", FormatNvidiaSmiText, 1, 1, ClockRowOrder, "excludes-reserved"},
		// Four DCGM scrapes, each after a date line.
		{"dcgm_date_curl_loop_5min.txt", FormatDCGMPrometheus, 4, 4, ClockAbsolute, "excludes-reserved"},
		// One GPU, 60 timestamped scrapes under three pods in turn; one
		// GPU three pods share, 4 scrapes without times (a line per pod).
		{"dcgm_pods_job_creep.txt", FormatDCGMPrometheus, 60, 60, ClockAbsolute, "excludes-reserved"},
		{"dcgm_shared_exported_pod.txt", FormatDCGMPrometheus, 4, 4, ClockRowOrder, "excludes-reserved"},
		// 80 --query-gpu rows (TestDSTFallBackQueryGPU reads them in Europe/Berlin).
		{"dst_fallback_berlin_query_gpu.csv", FormatQueryGPU, 80, 80, ClockAbsolute, "excludes-reserved"},
		// The tester's logs with a known answer (testdata/README.md, "NVML
		// trend logs with a known answer"): one row per sample of the
		// generators (120 or 240 samples, 6 by hand); 12 DCGM scrapes
		// without timestamps. nvidia-smi's memory.used and DCGM's FB_USED
		// leave the reservation out.
		{"hunt_late_leak_last10pct.csv", FormatQueryGPU, 120, 120, ClockAbsolute, "excludes-reserved"},
		{"hunt_late_leak_last50pct.csv", FormatQueryGPU, 120, 120, ClockAbsolute, "excludes-reserved"},
		{"hunt_short_monotonic_100MiBpermin.csv", FormatQueryGPU, 6, 6, ClockAbsolute, "excludes-reserved"},
		{"hunt_sawtooth_floor_50MiB_per_cycle.csv", FormatQueryGPU, 240, 240, ClockAbsolute, "excludes-reserved"},
		// gen_trend.py writes memory.free as total - used: used + free =
		// total reads as the reservation counted in used, without a
		// memory.reserved column to subtract.
		{"hunt_warmup_flat.csv", FormatQueryGPU, 120, 120, ClockAbsolute, "includes-reserved-unknown"},
		{"hunt_eval_sawtooth.csv", FormatQueryGPU, 120, 120, ClockAbsolute, "includes-reserved-unknown"},
		{"hunt_restart.csv", FormatQueryGPU, 120, 120, ClockAbsolute, "includes-reserved-unknown"},
		// s42 (testdata/README.md): an hour of one GPU, 10 s apart.
		{"s42_slow_leak_noise100.csv", FormatQueryGPU, 360, 360, ClockAbsolute, "includes-reserved-unknown"},
		{"s42_slow_leak_noise200.csv", FormatQueryGPU, 360, 360, ClockAbsolute, "includes-reserved-unknown"},
		{"s42_slow_leak_noise400.csv", FormatQueryGPU, 360, 360, ClockAbsolute, "includes-reserved-unknown"},
		{"s42_noisy_flat_gpu.csv", FormatQueryGPU, 360, 360, ClockAbsolute, "includes-reserved-unknown"},
		// s43 (testdata/README.md): 10 s apart; memory.used and memory.total
		// without memory.free, as hunt_short_monotonic's; the apps log has
		// one pid at a time, so a row an instant.
		{"s43_n02_slow_leak.csv", FormatQueryGPU, 720, 720, ClockAbsolute, "excludes-reserved"},
		{"s43_n02a_nospike.csv", FormatQueryGPU, 720, 720, ClockAbsolute, "excludes-reserved"},
		{"s43_n02b_spike100.csv", FormatQueryGPU, 720, 720, ClockAbsolute, "excludes-reserved"},
		{"s43_grow_then_release.csv", FormatQueryGPU, 60, 60, ClockAbsolute, "includes-reserved-unknown"},
		{"s43_steady_decline.csv", FormatQueryGPU, 60, 60, ClockAbsolute, "includes-reserved-unknown"},
		{"s43_dcgm_shared_pods_order.txt", FormatDCGMPrometheus, 8, 8, ClockRowOrder, "excludes-reserved"},
		// Session 44 (h44f): a fenced dmon excerpt from a project report,
		// two GPUs at one instant; a Metaflow job's log, each line behind
		// its time and task tags: one table of a V100 under driver 450.
		{"pub_nsa_fsdp_dmon_fenced.txt", FormatDmon, 2, 1, ClockRowOrder, "excludes-reserved"},
		{"pub_metaflow_gpu_job_log.txt", FormatNvidiaSmiText, 1, 1, ClockAbsolute, "includes-reserved-unknown"},
		{"s43_capacity_crashloop_short_runs.csv", FormatQueryGPU, 360, 360, ClockAbsolute, "includes-reserved-unknown"},
		{"s43_shardload_crashloop.csv", FormatQueryGPU, 360, 360, ClockAbsolute, "includes-reserved-unknown"},
		{"s43_smi_quoted_after_intro.txt", FormatNvidiaSmiText, 16, 8, ClockAbsolute, "excludes-reserved,process"},
		{"s43_dcgm_eight_jobs_staircase.txt", FormatDCGMPrometheus, 120, 120, ClockAbsolute, "excludes-reserved"},
		{"s43_n02c_spike1g.csv", FormatQueryGPU, 720, 720, ClockAbsolute, "excludes-reserved"},
		{"s43_n08_stair_leak_with_transients.csv", FormatQueryGPU, 720, 720, ClockAbsolute, "excludes-reserved"},
		{"s43_n11_leak_with_20MiB_transients.csv", FormatQueryGPU, 720, 720, ClockAbsolute, "excludes-reserved"},
		// h44 (testdata/README.md): memory.used, .total and .free without
		// memory.reserved, as s42's: whether used counts it is not known.
		{"h44_warmup_flat_spikes.csv", FormatQueryGPU, 700, 700, ClockAbsolute, "includes-reserved-unknown"},
		{"h44_dcgm_exporter_restart.txt", FormatDCGMPrometheus, 120, 60, ClockAbsolute, "excludes-reserved"},
		{"s43_n03_sawtooth.csv", FormatQueryGPU, 360, 360, ClockAbsolute, "excludes-reserved"},
		{"s43_n09_leak_oom_restart_cycles.csv", FormatQueryGPU, 520, 520, ClockAbsolute, "excludes-reserved"},
		{"s43_n09b_two_cycles.csv", FormatQueryGPU, 260, 260, ClockAbsolute, "excludes-reserved"},
		// h44g (testdata/README.md): the session-44 tester's memory.used,
		// .total and .free without memory.reserved: whether used counts it
		// is not known.
		{"h44g_leak_periodic_dips.csv", FormatQueryGPU, 1440, 1440, ClockAbsolute, "includes-reserved-unknown"},
		{"h44g_ramp3_glitch.csv", FormatQueryGPU, 401, 401, ClockAbsolute, "includes-reserved-unknown"},
		{"t45b_gpu_lost_xid79.csv", FormatQueryGPU, 100, 100, ClockAbsolute, "excludes-reserved"},
		// f48n1: GPU 0's three rows and GPU 1's one, the last line cut.
		{"minimax_test_gpu_summary_cut_last.csv", FormatQueryGPU, 4, 3, ClockAbsolute, "excludes-reserved"},
		// f48n1: watch nvidia-smi tables, watch's header before nvidia-smi's ctime line.
		{"vllm_notes_watch_i2_a100_595.txt", FormatNvidiaSmiText, 2, 1, ClockAbsolute, "excludes-reserved,process"},
		{"pytorch_notes_watch_titanxp_455_xorg.md", FormatNvidiaSmiText, 4, 1, ClockAbsolute, "includes-reserved-unknown,process"},
		// f48n1: dmon -o TD after its command line, a blank line among the rows.
		{"cnnotes_dmon_TD_blank_line_fb_churn.txt", FormatDmon, 6, 6, ClockAbsolute, "excludes-reserved"},
		// f48n1: a K80 table, lspci's line before it, its bottom border cut.
		{"openmm2386_k80_410_lspci_before.txt", FormatNvidiaSmiText, 1, 1, ClockAbsolute, "includes-reserved-unknown"},
		{"vgpusched7_v100_440_box_unclosed_then_prose.txt", FormatNvidiaSmiText, 1, 1, ClockRowOrder, "includes-reserved-unknown"},
		// f48n1: a table of graphics processes, its last row cut; DCGM
		// exporter's MIG instances, a line cut (TestF48n1AdviceThatWorks).
		{"nvmlfix11_gtx1070_396_xorg_procs_cut.txt", FormatNvidiaSmiText, 4, 1, ClockRowOrder, "includes-reserved-unknown,process"},
		{"dcgmexporter317_a30_mig_fb_used_cut.txt", FormatDCGMPrometheus, 6, 1, ClockRowOrder, "excludes-reserved"},
		// f48n1: gpustat 0.4's text, its header without a driver version.
		{"gpustat18_v04_no_driver_prompt_percent.txt", FormatGpustatText, 1, 1, ClockAbsolute, "includes-reserved-unknown"},
		// f48n1: gpustat's default text, processes by user alone (TestF48n1GpustatUsersWithoutPIDs).
		{"gpustat_test_default_user_only.txt", FormatGpustatText, 3, 1, ClockRowOrder, "includes-reserved-unknown"},
		{"t45b_eval_spikes_floor_5_cycles.csv", FormatQueryGPU, 900, 900, ClockAbsolute, "includes-reserved-unknown"},
		// f45c (testdata/README.md): memory.used, .total and .free as h44g's
		// (no reservation column), a header and 1500, 1500 and 302 rows.
		{"f45c_flat_one_full_mid.csv", FormatQueryGPU, 1500, 1500, ClockAbsolute, "includes-reserved-unknown"},
		{"f45c_one_row_used_eq_total.csv", FormatQueryGPU, 1500, 1500, ClockAbsolute, "includes-reserved-unknown"},
		{"f45c_one_full_last_but_one.csv", FormatQueryGPU, 302, 302, ClockAbsolute, "includes-reserved-unknown"},
		{"s43_n10_apps_leak_restart.csv", FormatQueryApps, 508, 508, ClockAbsolute, "process"},
		// h45v (testdata/README.md): a warm-up then a slow leak (1000
		// rows); a fleet CSV with a hostname column, 2 hosts of 2 GPUs
		// over 4 ticks, each host's rows at its own times: 4 instants
		// per host, as fleet_pdsh_query_gpu.txt.
		{"h45v_warmup_then_slow_leak.csv", FormatQueryGPU, 1000, 1000, ClockAbsolute, "excludes-reserved"},
		{"h46b_ramp_final_jump_3.csv", FormatQueryGPU, 720, 720, ClockAbsolute, "excludes-reserved"},
		{"h46b_ramp_late_jump_30.csv", FormatQueryGPU, 720, 720, ClockAbsolute, "excludes-reserved"},
		{"h46b_restart_then_end_spike.csv", FormatQueryGPU, 725, 725, ClockAbsolute, "excludes-reserved"},
		{"h46b_gpu_swap_base.csv", FormatQueryGPU, 120, 120, ClockAbsolute, "excludes-reserved"},
		{"h46b_gpu_swap_run.csv", FormatQueryGPU, 120, 120, ClockAbsolute, "excludes-reserved"},
		{"h46b_lost_gpu_table.txt", FormatNvidiaSmiText, 18, 12, ClockAbsolute, "excludes-reserved"},
		{"h46b_lost_gpu_q.txt", FormatNvidiaSmiText, 12, 8, ClockAbsolute, "excludes-reserved"},
		{"h46b_fleet_prefix_and_column.txt", FormatQueryGPU, 80, 20, ClockAbsolute, "excludes-reserved"},
		{"h45v_fleet_hostname_column.csv", FormatQueryGPU, 16, 4, ClockAbsolute, "excludes-reserved"},
		// h45v: 12 scrapes of 2 GPUs each, before and after a DCGM
		// exporter restart (TestDiffPairsDCGMSeriesByUUID).
		{"h45v_dcgm_before_restart.txt", FormatDCGMPrometheus, 24, 12, ClockAbsolute, "excludes-reserved"},
		{"h45v_dcgm_after_restart.txt", FormatDCGMPrometheus, 24, 12, ClockAbsolute, "excludes-reserved"},
		// s42: cut in the last line's last value, which has no line ending
		// (186 and 158 lines): skipped, read in part (TestSession42CutLast).
		{"s42_apps_cut_num.csv", FormatQueryApps, 185, 185, ClockAbsolute, "process"},
		{"s42_dcgm_cut.txt", FormatDCGMPrometheus, 39, 39, ClockRowOrder, "excludes-reserved"},
		{"hunt_dcgm_no_times_5min.txt", FormatDCGMPrometheus, 12, 12, ClockRowOrder, "excludes-reserved"},
		// s43 (testdata/README.md): a minute apart, 60 rows each; dcgmi
		// dmon without times, 80 GPU lines (40 scrapes of two GPUs; its
		// header printed three times); pmon without times, 120 process
		// lines (60 samples of two processes).
		{"s43_grow_then_release.csv", FormatQueryGPU, 60, 60, ClockAbsolute, "includes-reserved-unknown"},
		{"s43_t6_plateau.csv", FormatQueryGPU, 60, 60, ClockAbsolute, "includes-reserved-unknown"},
		{"s43_dcgmi_leak.txt", FormatDcgmiDmon, 80, 40, ClockRowOrder, "excludes-reserved"},
		{"s43_pmon_reuse.txt", FormatPmon, 120, 60, ClockRowOrder, "process"},
		// s37 (testdata/README.md): 12 rows of one GPU, 1 s apart, in
		// query_gpu.csv's columns (memory.reserved among them); used
		// above the total is the trend analysis's to warn about.
		{"s37_used_above_total.csv", FormatQueryGPU, 12, 12, ClockAbsolute, "excludes-reserved"},
		{"s37_one_sample_above_total.csv", FormatQueryGPU, 12, 12, ClockAbsolute, "excludes-reserved"},
		// u48b: pynvml's c_nvmlMemory_t printouts of two GPUs at four
		// times in a training log (v1: used counts the reservation).
		{"u48b_pynvml_struct_printouts.log", FormatPynvmlText, 8, 4, ClockAbsolute, "includes-reserved-unknown"},
		// u48b: "date; nvidia-smi --query-gpu=... --format=csv,noheader;
		// sleep 300" three times: the rows at their date line's time.
		{"u48b_date_loop_headerless_query_gpu.log", FormatQueryGPU, 6, 3, ClockAbsolute, "includes-reserved-unknown"},
		// u48b: 9 tables of a MIG A100 (GPU row, MIG devices box not read,
		// two processes of GPU instances 3 and 5).
		{"u48b_mig_table_growing_instance_process.txt", FormatNvidiaSmiText, 27, 9, ClockAbsolute, "includes-reserved-unknown,process"},
		// query_gpu.csv restarted with fewer fields for its first 200 rows:
		// every row read, as the whole log's 459; without memory.free
		// (and reserved) the first 200 are excludes-reserved as nvidia-smi's
		// memory.used is.
		{"query_gpu_restarted_new_fields.csv", FormatQueryGPU, 459, 459, ClockAbsolute, "excludes-reserved"},
		// Fleet logs (TestFleetPdsh, TestFleetPsshInline): two hosts of
		// two GPUs, four ticks each (a host's ticks, not one per change
		// of host); two hosts of one GPU, three ticks each.
		{"fleet_pdsh_query_gpu.txt", FormatQueryGPU, 16, 4, ClockAbsolute, "excludes-reserved"},
		{"fleet_pssh_i_query_gpu.txt", FormatQueryGPU, 6, 3, ClockAbsolute, "excludes-reserved"},
		// ansible -o and parallel-ssh -i with standard error over lines
		// (session 42, written from the tools' source).
		{"fleet_ansible_o_query_gpu.txt", FormatQueryGPU, 4, 1, ClockAbsolute, "excludes-reserved"},
		{"fleet_pssh_i_stderr_lines.txt", FormatQueryGPU, 6, 3, ClockAbsolute, "excludes-reserved"},
		// nvidia-smi -q -x and -q on an H200 (session 42): the GPU, and
		// pid 614's 6662 MiB when it ran.
		{"h200_q_x_process.xml", FormatNvidiaSmiXML, 2, 1, ClockAbsolute, "excludes-reserved,process"},
		{"h200_q_x_idle.xml", FormatNvidiaSmiXML, 1, 1, ClockAbsolute, "excludes-reserved"},
		{"h200_q_process.txt", FormatNvidiaSmiText, 2, 1, ClockAbsolute, "excludes-reserved,process"},
		// Session 48 (f48n2): outputs behind a line of prose, a worker's
		// tag, "# " comments, a piped prompt. The A10's log has no index
		// and rows ~4 ms apart: placed as the GPUs of one tick, then one
		// (2 instants), which the log cannot confirm or refute.
		{"pub_cnnotes_lms_query_gpu_nospace_prompt_a10.txt", FormatQueryGPU, 5, 2, ClockAbsolute, "excludes-reserved"},
		{"pub_d2l_gpu_py_hash_commented_win_table_552.py", FormatNvidiaSmiText, 23, 1, ClockAbsolute, "excludes-reserved,process"},
		{"pub_dcgm_parse_docstring_dmon_indented.txt", FormatDcgmiDmon, 1, 1, ClockRowOrder, "excludes-reserved"},
		{"pub_ddp_tutorial_dmon_pucm_yaml_indented.txt", FormatDmon, 5, 3, ClockRowOrder, "excludes-reserved"},
		{"pub_skypilot_pool_job_log_prefix_h100.txt", FormatNvidiaSmiText, 1, 1, ClockAbsolute, "excludes-reserved"},
		{"pub_adamu_dmon_pucm_rows_commented.txt", FormatDmon, 2, 2, ClockRowOrder, "excludes-reserved"},
	}
	seen := map[string]bool{"pub_gpustat130_two_outputs.txt": true, "field": true,
		// Inputs that hold no memory sample: TestFieldUnreadable.
		"field/nvitop8_mig_devices_cut.txt": true, "field/nvtop470_query_mig_mode_na.txt": true, "field/gpumontools12_dcgm_go_dmon_no_fb.txt": true,
		// Errors (TestHunt41CommandLines; cmd's TestHunt41ToolErrorPaste).
		"field/mindminer627_win_query_no_memory_unknown_error.txt": true, "field/xxd3vin19_device_handle_unknown_error.txt": true, "field/sysmon12_q_cut_before_memory.txt": true,
		"field/telegraf5532_dmon_s_u_no_fb.txt": true, "field/cpux115_q_x_cut.txt": true,
		// -q -x cut before the first GPU's memory (TestHunt42XMLCut).
		"field/telegraf5812_q_x_a100_mig_cut.txt": true, "field/onepanel9504_q_x_390_fenced_cut.txt": true,
		"field/dcgmexporter736_hostname_lower_mig.txt": true, "field/ddii_dcgmi_dmon_no_fb.txt": true,
		"field/sonar460_gb10_used_na.csv": true, "field/unsloth10283_gb10_free_total_used_na.csv": true,
		"field/unsloth10703_gb10_no_used_column.txt": true, "field/arctictraining345_gb10_table_not_supported.txt": true,
		"field/gpuoperator340_dcgm_fb_used_cut.prom": true,
		// Forms parse.Open decodes before this reader sees them (a gzip
		// stream cut short, UTF-16 without a byte order mark): cmd's
		// TestGzipCutNVMLReadInPart and TestUTF16NoBOMCSV.
		"hunt_eval_sawtooth_gzip_cut.csv.gz": true, "query_gpu_utf16le_nobom.csv": true,
		// Header-less in fields of its own: TestFleetClushGathered names them.
		"fleet_clush_b_query_gpu.txt": true,
		// Header-less, read with --fields, and a paste whose prompt has no
		// space: TestF48n1BusIDNamesTheGPU, TestF48n1LastTickShort.
		"omniopt_gpu_usage_a100_noheader_busid.csv": true, "cnnotes_lms_query_gpu_nospace_prompt_a10.txt": true,
		// Refused (no memory figure): TestF48n1OrinAdvice.
		"oe4t17_orin_540_driver_na.txt": true,
		// A -q excerpt without its GPU line, refused: TestHunt44fQExcerptWithoutGPULine.
		"pub_libc6shim14_q_excerpt_no_gpu_line.txt": true,
		// Session 48 (f48n2): refused with what they lack (TestQReportCutBeforeFB,
		// TestXMLExcerptOfProcesses), or read only with --fields (cmd's
		// TestReportFields, TestAnalyzeFieldsHostFirst).
		"pub_nvdocker617_k80_q_attached4_cut_before_fb.txt": true, "pub_telegraf12996_windows_xml_procs_na_excerpt.txt": true,
		"pub_omniopt_gpu_usage_a100_noheader_busid.csv": true, "pub_slurmtool_srun_noheader_host_first_field.txt": true,
		// Two outputs, --query-gpu then --query-compute-apps: TestHashCommentedOutputs.
		"pub_nvtop432_wsl2_hash_prefixed_outputs.txt": true,
		// No memory figure: TestDiscreteGPUNoMemoryFigure, TestDCGMNoFBMetrics.
		"pub_yolox1429_windows_not_supported_bold.txt": true, "pub_dcgmexporter250_v100_excerpt_no_fb_metrics.txt": true}
	for _, tt := range tests {
		seen[tt.file] = true
		t.Run(tt.file, func(t *testing.T) {
			rows, meta := readFile(t, fixtures+tt.file)
			if meta.Format != tt.format {
				t.Errorf("format %q, want %q", meta.Format, tt.format)
			}
			if meta.Rows != tt.rows || int64(len(rows)) != tt.rows {
				t.Errorf("%d rows (meta %d), want %d", len(rows), meta.Rows, tt.rows)
			}
			if meta.Instants != tt.instants {
				t.Errorf("%d instants, want %d", meta.Instants, tt.instants)
			}
			if meta.Clock != tt.clock {
				t.Errorf("clock %v, want %v", meta.Clock, tt.clock)
			}
			convs := map[string]bool{}
			for _, r := range rows {
				convs[r.Convention] = true
				// A paste of gpustat's text then nvidia-smi's table holds
				// rows of both.
				both := tt.format == FormatGpustatText && r.Source == string(FormatNvidiaSmiText)
				if r.Source != string(tt.format) && !both {
					t.Fatalf("source %q", r.Source)
				}
				if r.Used != nil && *r.Used < 0 {
					t.Fatalf("negative used %d at %d", *r.Used, r.TimeUs)
				}
			}
			var got []string
			for _, c := range []string{"excludes-reserved", "includes-reserved", "includes-reserved-unknown", "process"} {
				if convs[c] {
					got = append(got, c)
				}
			}
			if strings.Join(got, ",") != tt.conventions {
				t.Errorf("conventions %v, want %s", got, tt.conventions)
			}
		})
	}
	files, _ := filepath.Glob(fixtures + "*")
	field, _ := filepath.Glob(fixtures + "field/*")
	for _, f := range append(files, field...) {
		if !seen[strings.TrimPrefix(f, fixtures)] {
			t.Errorf("%s: no expectations for this fixture", f)
		}
	}
}

// query_gpu.csv: 459 samples with a 4907 MiB peak (fixtures README).
func TestQueryGPUFixture(t *testing.T) {
	rows, meta := readFile(t, fixtures+"query_gpu.csv")
	if len(rows) != 459 {
		t.Fatalf("%d samples, want 459", len(rows))
	}
	p, at := peak(rows)
	if p != mib(4907) {
		t.Errorf("peak %d bytes, want 4907 MiB", p)
	}
	if want := utc(2026, 11, 30, 8, 7, 13, 482); at != want {
		t.Errorf("peak first at %d, want %d (line 243)", at, want)
	}
	r := rows[0]
	if r.GPU == nil || *r.GPU != 0 || r.UUID != "GPU-f7fe13ab-e2ff-251e-34e3-f58c08f17771" || r.GPUName != "NVIDIA H200" {
		t.Errorf("first row identifies %+v", r)
	}
	if val(r.Total) != mib(143771) || val(r.Free) != mib(143156) || val(r.Reserved) != mib(616) || val(r.Used) != 0 {
		t.Errorf("first row memory %d/%d/%d/%d", val(r.Used), val(r.Total), val(r.Free), val(r.Reserved))
	}
	if r.TimeUs != utc(2026, 11, 30, 8, 6, 12, 696) {
		t.Errorf("first time %d", r.TimeUs)
	}
	if !meta.Header || len(meta.Fields) != 11 {
		t.Errorf("header %v fields %v", meta.Header, meta.Fields)
	}
}

// The three device-level logs of one run agree on the peak once used is
// normalised: query_gpu.csv 4907 MiB (616 MiB memory.reserved beside it),
// dmon.txt 4907 MiB fb, pynvml.jsonl 5521.875 MiB used of which 615.06 MiB
// is the reservation NVML v1 counts. (The fixtures README says dmon's peak
// is 4908: that is the bar1 column next to fb; fb peaks at 4907.) Their
// peaks are reached within one sampling step (dmon's 1 s) of each other.
func TestDeviceLogsAgreeOnPeak(t *testing.T) {
	type got struct {
		file     string
		peak, at int64
	}
	var all []got
	for _, f := range []string{"query_gpu.csv", "dmon.txt", "pynvml.jsonl"} {
		rows, _ := readFile(t, fixtures+f)
		p, at := peak(rows)
		all = append(all, got{f, p, at})
	}
	for _, g := range all {
		if d := g.peak - all[0].peak; d < -MiB || d > MiB {
			t.Errorf("%s peak %.3f MiB, query_gpu.csv %.3f MiB", g.file, float64(g.peak)/MiB, float64(all[0].peak)/MiB)
		}
		if d := g.at - all[0].at; d < -1e6 || d > 1e6 {
			t.Errorf("%s peak at %d, %.3f s from query_gpu.csv's", g.file, g.at, float64(d)/1e6)
		}
	}

	rows, _ := readFile(t, fixtures+"pynvml.jsonl")
	for _, r := range rows {
		if r.PID != nil {
			continue
		}
		if r.Convention != string(IncludesReserved) || val(r.Reserved) != 644939776 {
			t.Fatalf("pynvml row: convention %s reserved %d, want includes-reserved 644939776 (615.06 MiB)", r.Convention, val(r.Reserved))
		}
		// The logged value comes back by adding the reservation: used + free = total.
		if val(r.Used)+val(r.Reserved)+val(r.Free) != val(r.Total) {
			t.Fatalf("pynvml row: used %d + reserved + free != total", val(r.Used))
		}
	}
	if p, _ := peak(rows); p+644939776 != 5790105600 { // 5521.875 MiB, the logged peak
		t.Errorf("pynvml logged peak %d", p+644939776)
	}
}

// Header-less, unit-less CSV with the default field order; memory.reserved
// is recovered as total - used - free.
func TestHeaderlessUnitless(t *testing.T) {
	in := "2026/11/30 09:08:02.276, 0, GPU-a, NVIDIA H200, 143771, 0, 143156\n" +
		"2026/11/30 09:08:58.387, 0, GPU-a, NVIDIA H200, 143771, 135489, 7668\n"
	rows, meta, err := readRows(t, "h.csv", in)
	if err != nil {
		t.Fatal(err)
	}
	if meta.Header || strings.Join(meta.Fields, ",") != strings.Join(DefaultQueryGPUFields, ",") {
		t.Errorf("fields %v header %v", meta.Fields, meta.Header)
	}
	if len(rows) != 2 || val(rows[1].Used) != mib(135489) || val(rows[1].Total) != mib(143771) || val(rows[1].Free) != mib(7668) {
		t.Fatalf("rows %+v", rows)
	}
	if val(rows[0].Reserved) != mib(615) || val(rows[1].Reserved) != mib(614) {
		t.Errorf("reserved %d, %d: want total - used - free", val(rows[0].Reserved), val(rows[1].Reserved))
	}
	if rows[1].TimeUs != utc(2026, 11, 30, 9, 8, 58, 387) {
		t.Errorf("time %d", rows[1].TimeUs)
	}

	// The real file of another run: its peak and its last row.
	rows, _ = readFile(t, fixtures+"query_gpu_noheader_nounits.csv")
	if p, _ := peak(rows); p != mib(141633) {
		t.Errorf("peak %d", p)
	}

	// Another order given with WithFields.
	rows, _, err = readRows(t, "f.csv", "0, 4907, 2026/11/30 08:07:13.482\n", WithFields([]string{"index", "memory.used", "timestamp"}),
		WithFormat(FormatQueryGPU))
	if err != nil || len(rows) != 1 || val(rows[0].Used) != mib(4907) || rows[0].TimeUs != utc(2026, 11, 30, 8, 7, 13, 482) {
		t.Errorf("WithFields: %+v %v", rows, err)
	}
}

// Placeholders are nulls, whatever the field.
func TestPlaceholders(t *testing.T) {
	in := "timestamp, index, name, memory.total [MiB], memory.used [MiB], memory.free [MiB], memory.reserved [MiB]\n" +
		"2026/01/02 03:04:05.006, 0, [N/A], [N/A], 100 MiB, [Not Supported], [Insufficient Permissions]\n" +
		"2026/01/02 03:04:05.006, [Unknown Error], NVIDIA A100, 81920 MiB, N/A, 80000 MiB, [GPU requires reset]\n"
	rows, _, err := readRows(t, "p.csv", in)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("%d rows", len(rows))
	}
	a, b := rows[0], rows[1]
	if a.GPUName != "" || a.Total != nil || a.Free != nil || a.Reserved != nil || val(a.Used) != mib(100) {
		t.Errorf("row 1: %+v", a)
	}
	if b.GPU != nil || b.Used != nil || val(b.Total) != mib(81920) || b.GPUName != "NVIDIA A100" {
		t.Errorf("row 2: %+v", b)
	}
	// The real apps log of another run names a process [No data].
	rows, _ = readFile(t, fixtures+"query_apps_noheader.csv")
	nodata := 0
	for _, r := range rows {
		if r.Process == "" {
			nodata++
			if val(r.PID) != 533 || val(r.Used) != mib(994) {
				t.Errorf("[No data] row %+v", r)
			}
		}
	}
	if nodata != 1 {
		t.Errorf("%d rows without a process name, want 1", nodata)
	}
}

// nvidia-smi does not quote: a name with a comma spills into the next
// field and is joined back. Rows of two GPUs interleave.
func TestCommaNameAndInterleavedGPUs(t *testing.T) {
	in := "timestamp, index, uuid, name, memory.used [MiB], memory.total [MiB]\n" +
		"2026/01/02 03:04:05.000, 0, GPU-0, NVIDIA GeForce RTX 3090, Founders Edition, 10 MiB, 24576 MiB\n" +
		"2026/01/02 03:04:05.000, 1, GPU-1, Tesla T4, 20 MiB, 15360 MiB\n" +
		"2026/01/02 03:04:06.000, 0, GPU-0, NVIDIA GeForce RTX 3090, Founders Edition, 11 MiB, 24576 MiB\n" +
		"2026/01/02 03:04:06.000, 1, GPU-1, Tesla T4, 21 MiB, 15360 MiB\n"
	rows, _, err := readRows(t, "c.csv", in)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		gpu  int32
		uuid string
		name string
		used int64
	}{{0, "GPU-0", "NVIDIA GeForce RTX 3090, Founders Edition", 10}, {1, "GPU-1", "Tesla T4", 20},
		{0, "GPU-0", "NVIDIA GeForce RTX 3090, Founders Edition", 11}, {1, "GPU-1", "Tesla T4", 21}}
	if len(rows) != len(want) {
		t.Fatalf("%d rows", len(rows))
	}
	for i, w := range want {
		r := rows[i]
		if *r.GPU != w.gpu || r.UUID != w.uuid || r.GPUName != w.name || val(r.Used) != mib(w.used) {
			t.Errorf("row %d: %+v, want %+v", i, r, w)
		}
	}

	// Header-less, and a process name with a comma in an apps log.
	rows, _, err = readRows(t, "a.csv", "2026/01/02 03:04:05.000, GPU-0, 42, python3 train.py --tag a,b, 100 MiB\n")
	if err != nil || len(rows) != 1 || rows[0].Process != "python3 train.py --tag a,b" || val(rows[0].PID) != 42 {
		t.Errorf("apps: %+v %v", rows, err)
	}

	// Quoted fields, as some tools re-export the CSV.
	rows, _, err = readRows(t, "q.csv", "timestamp,index,name,memory.used [MiB]\n\"2026/01/02 03:04:05.000\",0,\"A, \"\"B\"\"\",7\n")
	if err != nil || len(rows) != 1 || rows[0].GPUName != `A, "B"` || val(rows[0].Used) != mib(7) {
		t.Errorf("quoted: %+v %v", rows, err)
	}
}

// Local timestamps are read in the WithLocation zone.
func TestLocation(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	in := "timestamp, index, memory.used [MiB]\n2026/11/30 08:06:12.696, 0, 1 MiB\n2026/07/01 08:00:00.000, 0, 1 MiB\n"
	rows, _, err := readRows(t, "tz.csv", in, WithLocation(berlin))
	if err != nil {
		t.Fatal(err)
	}
	// November: CET, UTC+1; July: CEST, UTC+2.
	if rows[0].TimeUs != utc(2026, 11, 30, 7, 6, 12, 696) || rows[1].TimeUs != utc(2026, 7, 1, 6, 0, 0, 0) {
		t.Errorf("times %d %d", rows[0].TimeUs, rows[1].TimeUs)
	}
	// An explicit offset wins over the zone.
	rows, _, _ = readRows(t, "tz.csv", "timestamp, index, memory.used [MiB]\n2026-11-30T08:06:12.5+05:30, 0, 1 MiB\n", WithLocation(berlin))
	if len(rows) != 1 || rows[0].TimeUs != utc(2026, 11, 30, 2, 36, 12, 500) {
		t.Errorf("offset: %+v", rows)
	}
}

// Fields in another order, with memory.reserved.
func TestReordered(t *testing.T) {
	rows, meta := readFile(t, fixtures+"query_gpu_reordered.csv")
	if strings.Join(meta.Fields, ",") != "index,memory.used,memory.total,timestamp,name,memory.reserved" {
		t.Errorf("fields %v", meta.Fields)
	}
	// Line 12: "0, 549 MiB, 143771 MiB, 2026/11/30 09:08:07.279, NVIDIA H200, 616 MiB".
	r := rows[10]
	if val(r.Used) != mib(549) || val(r.Total) != mib(143771) || val(r.Reserved) != mib(616) || r.Free != nil ||
		r.TimeUs != utc(2026, 11, 30, 9, 8, 7, 279) || r.GPUName != "NVIDIA H200" || r.UUID != "" {
		t.Errorf("line 12: %+v", r)
	}
}

// dmon and pmon: repeated headers, "-" values, logs without dates or times.
func TestMon(t *testing.T) {
	rows, meta := readFile(t, fixtures+"dmon.txt")
	if rows[0].TimeUs != utc(2026, 11, 30, 8, 6, 12, 0) || len(meta.Warnings.Strings()) != 0 {
		t.Errorf("dmon first %d, warnings %v", rows[0].TimeUs, meta.Warnings.Strings())
	}

	// Time of day only: the date from WithDate, the next day after midnight.
	in := "#Time gpu pid type fb command\n#HH:MM:SS Idx # C/G MB name\n" +
		" 23:59:58 0 7 C 100 python3\n 23:59:59 0 - - - -\n 00:00:01 0 7 C 200 my trainer\n"
	day := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	rows, meta, err := readRows(t, "p.txt", in, WithDate(day))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].TimeUs != utc(2026, 11, 30, 23, 59, 58, 0) || rows[1].TimeUs != utc(2026, 12, 1, 0, 0, 1, 0) {
		t.Errorf("rows %+v", rows)
	}
	if rows[1].Process != "my trainer" || val(rows[1].Used) != mib(200) {
		t.Errorf("command with a space: %+v", rows[1])
	}
	if meta.Ticks != 3 || meta.LastUs != rows[1].TimeUs || !meta.DateGiven || len(meta.Warnings.Strings()) != 0 {
		t.Errorf("meta %+v", meta)
	}

	// The real -o T log: 1970-01-01 without a date, and a warning says so.
	rows, meta = readFile(t, fixtures+"pmon_mu_T.txt")
	if rows[0].TimeUs != us(time.Date(1970, 1, 1, 9, 8, 7, 0, time.UTC)) || val(rows[0].PID) != 465 || len(meta.Warnings.Strings()) != 1 {
		t.Errorf("pmon -o T: %+v %v", rows[0], meta.Warnings.Strings())
	}
	// Its idle rows extend the log to 09:09:05, past the last process row.
	if meta.LastUs != us(time.Date(1970, 1, 1, 9, 9, 5, 0, time.UTC)) {
		t.Errorf("last %d", meta.LastUs)
	}

	// No times: ticks by row order, two GPUs per tick, from WithStart every WithInterval.
	in = "# gpu fb\n# Idx MB\n 0 1\n 1 2\n 0 3\n 1 -\n# gpu fb\n# Idx MB\n 0 5\n"
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rows, meta, err = readRows(t, "d.txt", in, WithStart(start), WithInterval(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	wantT := []int64{0, 0, 2, 2, 4}
	for i, r := range rows {
		if r.TimeUs != us(start)+wantT[i]*1e6 {
			t.Errorf("row %d at %d, want start+%ds", i, r.TimeUs, wantT[i])
		}
	}
	if rows[3].Used != nil || meta.Clock != ClockRowOrder {
		t.Errorf("'-' fb %+v, clock %v", rows[3], meta.Clock)
	}
	for _, w := range meta.Warnings.Strings() {
		if strings.Contains(w, "not used") {
			t.Errorf("WithStart placed this log's rows, yet: %q", w)
		}
	}
	// A log with its own dates (-o DT) does not use WithStart: say so,
	// rather than ignore the option silently.
	in = "#Date Time gpu fb\n#YYYYMMDD HH:MM:SS Idx MB\n 20261130 08:06:12 0 1\n"
	_, meta, err = readRows(t, "dt.txt", in, WithStart(start))
	if err != nil || meta.Clock != ClockAbsolute || !slices.ContainsFunc(meta.Warnings.Strings(), func(w string) bool { return strings.Contains(w, "start time was not used") }) {
		t.Errorf("err %v, clock %v, warnings %q: want one saying the start time was not used", err, meta.Clock, meta.Warnings.Strings())
	}

	// pmon without times: a tick ends where a (gpu, pid) repeats.
	in = "# gpu pid type fb command\n# Idx # C/G MB name\n 0 1 C 10 a\n 0 2 C 20 b\n 0 1 C 11 a\n 0 - - - -\n 0 - - - -\n 0 2 C 5 b\n"
	rows, _, err = readRows(t, "p.txt", in)
	if err != nil {
		t.Fatal(err)
	}
	wantT = []int64{0, 0, 1, 4}
	for i, r := range rows {
		if r.TimeUs != wantT[i]*1e6 {
			t.Errorf("pmon row %d at %d µs, want %d s", i, r.TimeUs, wantT[i])
		}
	}
}

func TestPynvml(t *testing.T) {
	// A JSON array, ts in milliseconds, a process whose memory NVML did not report.
	in := `[{"timestamp": 1796025972846, "index": 1, "uuid": "GPU-x", "total": 100, "used": 60, "free": 40,
  "processes": [{"pid": 5, "usedGpuMemory": null}, {"pid": 6, "used_memory": 30, "name": "python"}]}]`
	rows, _, err := readRows(t, "p.json", in)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows", len(rows))
	}
	d := rows[0]
	// used + free = total and no reserved: the reservation is counted but unknown.
	if d.TimeUs != 1796025972846000 || *d.GPU != 1 || val(d.Used) != 60 || d.Convention != string(IncludesReservedUnknown) {
		t.Errorf("device %+v", d)
	}
	if val(rows[1].PID) != 5 || rows[1].Used != nil || val(rows[2].Used) != 30 || rows[2].Process != "python" || *rows[2].GPU != 1 {
		t.Errorf("processes %+v %+v", rows[1], rows[2])
	}
	// NVML v2 numbers: used + free + reserved = total; used is kept.
	rows, _, _ = readRows(t, "v2.jsonl", `{"ts": 1.5, "gpu": 0, "total": 1000000000, "used": 100000000, "free": 800000000, "reserved": 100000000}`+"\n")
	if len(rows) != 1 || val(rows[0].Used) != 100000000 || rows[0].Convention != string(ExcludesReserved) || rows[0].TimeUs != 1500000 {
		t.Errorf("v2: %+v", rows)
	}
}

// gpustat --json: pretty-printed documents one after another, or one per line.
func TestGpustat(t *testing.T) {
	doc := func(tm string, used, p int) string {
		return `{
    "hostname": "node-7",
    "driver_version": "580.159.04",
    "query_time": "` + tm + `",
    "gpus": [
        {
            "index": 0,
            "uuid": "GPU-9f2",
            "name": "NVIDIA A100-SXM4-80GB",
            "temperature.gpu": 31,
            "fan.speed": null,
            "utilization.gpu": 0,
            "power.draw": 61,
            "enforced.power.limit": 400,
            "memory.used": ` + strconv.Itoa(used) + `,
            "memory.total": 81920,
            "processes": [
                {"username": "u", "command": "python", "full_command": ["python", "train.py"],
                 "gpu_memory_usage": ` + strconv.Itoa(p) + `, "cpu_percent": 0.0, "cpu_memory_usage": 1, "pid": 4242}
            ]
        }
    ]
}
`
	}
	pretty := doc("2026-11-30T08:06:12.500000", 1000, 990) + doc("2026-11-30T08:06:13.500000", 1100, 1090)
	lines := strings.ReplaceAll(doc("2026-11-30T08:06:12.500000", 1000, 990), "\n", "") + "\n" +
		strings.ReplaceAll(doc("2026-11-30T08:06:13.500000", 1100, 1090), "\n", "") + "\n"
	for name, in := range map[string]string{"pretty": pretty, "lines": lines} {
		rows, meta, err := readRows(t, name, in)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if meta.Format != FormatGpustatJSON || len(rows) != 4 {
			t.Fatalf("%s: %s, %d rows", name, meta.Format, len(rows))
		}
		d, p := rows[2], rows[3]
		if d.Host != "node-7" || d.TimeUs != utc(2026, 11, 30, 8, 6, 13, 500) || val(d.Used) != mib(1100) || val(d.Total) != mib(81920) ||
			d.Convention != string(IncludesReservedUnknown) || d.GPUName != "NVIDIA A100-SXM4-80GB" {
			t.Errorf("%s device %+v", name, d)
		}
		if val(p.PID) != 4242 || p.Process != "python" || val(p.Used) != mib(1090) || p.UUID != "GPU-9f2" {
			t.Errorf("%s process %+v", name, p)
		}
	}
}

// DCGM exporter text: pod labels, one scrape or many, with or without timestamps.
func TestDCGM(t *testing.T) {
	const labels0 = `gpu="0",UUID="GPU-aaa",pci_bus_id="00000000:01:00.0",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="node-1",DCGM_FI_DRIVER_VERSION="550.90.07",container="trainer",namespace="ml",pod="train-0"`
	const labels1 = `gpu="1",UUID="GPU-bbb",device="nvidia1",modelName="NVIDIA H100 80GB HBM3",Hostname="node-1"`
	scrape := func(used0, used1 int, ts string) string {
		return "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n" +
			"DCGM_FI_DEV_GPU_UTIL{" + labels0 + "} 97" + ts + "\n" +
			"# HELP DCGM_FI_DEV_FB_FREE Framebuffer memory free (in MiB).\n# TYPE DCGM_FI_DEV_FB_FREE gauge\n" +
			"DCGM_FI_DEV_FB_FREE{" + labels0 + "} " + strconv.Itoa(80000-used0) + ts + "\n" +
			"DCGM_FI_DEV_FB_FREE{" + labels1 + "} " + strconv.Itoa(80000-used1) + ts + "\n" +
			"# HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).\n# TYPE DCGM_FI_DEV_FB_USED gauge\n" +
			"DCGM_FI_DEV_FB_USED{" + labels0 + "} " + strconv.Itoa(used0) + ts + "\n" +
			"DCGM_FI_DEV_FB_USED{" + labels1 + "} " + strconv.Itoa(used1) + ts + "\n" +
			"# HELP DCGM_FI_DEV_FB_RESERVED Framebuffer memory reserved (in MiB).\n# TYPE DCGM_FI_DEV_FB_RESERVED gauge\n" +
			"DCGM_FI_DEV_FB_RESERVED{" + labels0 + "} 600" + ts + "\n" +
			"DCGM_FI_DEV_FB_RESERVED{" + labels1 + "} 600" + ts + "\n"
	}
	// One scrape without timestamps: one sample per GPU, with pod labels.
	rows, meta, err := readRows(t, "one.prom", scrape(38214, 1, ""))
	if err != nil {
		t.Fatal(err)
	}
	if meta.Format != FormatDCGMPrometheus || len(rows) != 2 {
		t.Fatalf("%s %d rows", meta.Format, len(rows))
	}
	a := rows[0]
	if a.Host != "node-1" || *a.GPU != 0 || a.UUID != "GPU-aaa" || a.Pod != "train-0" || a.Namespace != "ml" || a.Container != "trainer" ||
		val(a.Used) != mib(38214) || val(a.Free) != mib(80000-38214) || val(a.Reserved) != mib(600) || a.Total != nil ||
		a.GPUName != "NVIDIA H100 80GB HBM3" || a.Convention != string(ExcludesReserved) {
		t.Errorf("gpu 0: %+v", a)
	}
	if rows[1].Pod != "" || val(rows[1].Used) != mib(1) {
		t.Errorf("gpu 1: %+v", rows[1])
	}

	// Three scrapes without timestamps: 30 s apart.
	rows, meta, err = readRows(t, "three.prom", scrape(100, 1, "")+scrape(200, 1, "")+scrape(300, 1, ""))
	if err != nil || len(rows) != 6 || meta.Clock != ClockRowOrder {
		t.Fatalf("%d rows, clock %v, %v", len(rows), meta.Clock, err)
	}
	if rows[4].TimeUs != 60e6 || val(rows[4].Used) != mib(300) || *rows[4].GPU != 0 {
		t.Errorf("third scrape: %+v", rows[4])
	}

	// Scrapes with timestamps (ms).
	rows, meta, err = readRows(t, "ts.prom", scrape(100, 1, " 1796025972000")+scrape(200, 1, " 1796025987000"))
	if err != nil || len(rows) != 4 || meta.Clock != ClockAbsolute {
		t.Fatalf("%d rows, clock %v, %v", len(rows), meta.Clock, err)
	}
	if rows[2].TimeUs != 1796025987000000 || val(rows[2].Used) != mib(200) {
		t.Errorf("second scrape: %+v", rows[2])
	}

	// Series by series (as a TSDB dump writes them): grouped by time.
	in := "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-a\"} 1 1000\nDCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-a\"} 2 2000\n" +
		"DCGM_FI_DEV_FB_TOTAL{gpu=\"0\",UUID=\"GPU-a\"} 10 1000\nDCGM_FI_DEV_FB_TOTAL{gpu=\"0\",UUID=\"GPU-a\"} 10 2000\n"
	rows, _, err = readRows(t, "dump.prom", in)
	if err != nil || len(rows) != 2 || val(rows[1].Used) != mib(2) || val(rows[1].Total) != mib(10) || rows[1].TimeUs != 2e6 {
		t.Errorf("dump: %+v %v", rows, err)
	}

	// MIG instances are GPUs of their own.
	in = "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-a\",GPU_I_ID=\"3\"} 10\nDCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-a\",GPU_I_ID=\"5\"} 20\n"
	rows, _, err = readRows(t, "mig.prom", in)
	if err != nil || len(rows) != 2 || rows[0].UUID != "GPU-a/3" || rows[1].UUID != "GPU-a/5" || rows[0].TimeUs != rows[1].TimeUs {
		t.Errorf("mig: %+v %v", rows, err)
	}
}

// Garbage, truncated and empty input: clear errors with the line number.
func TestErrors(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		opts   []Option
		line   int
		msg    string
		notMin bool
	}{
		{"empty", "", nil, 1, "empty input", false},
		{"blank", "\n  \n\n", nil, 3, "only blank lines", false},
		{"garbage", "hello world\nthis is not a log\n", nil, 1, "not an NVML sample log", true},
		{"binary", "\x80\x02}q\x00(X\x08\x00\x00\x00segments", nil, 1, "not an NVML sample log", true},
		// A log none of whose rows can be read: the first row's error
		// (TestSkippedRows reads such rows beside good ones).
		{"csv truncated row", "timestamp, index, memory.used [MiB]\n2026/01/02 03:04:06.000, 0", nil, 2,
			"2 fields, but the header names 3", false},
		{"csv truncated value", "timestamp, index, memory.used [MiB]\n2026/01/02 03:04:06.000, 0, 1 Mi", nil, 2,
			`memory.used: "1 Mi" is not a size`, false},
		{"csv garbage line", "timestamp, index, memory.used [MiB]\nSegmentation fault (core dumped)\n2026/01/02 03:04:06.000, 0, 1 Mi\n", nil, 2,
			"1 fields, but the header names 3", false},
		{"csv bad time", "timestamp, index, memory.used [MiB]\nyesterday, 0, 1 MiB\n", nil, 2, "timestamp", false},
		{"csv header only", "timestamp, index, memory.used [MiB]\n", nil, 1, "a header without rows", false},
		{"csv no used column", "timestamp, index, utilization.gpu [%]\n", nil, 1, "no memory.used column", false},
		{"headerless wrong count", "2026/01/02 03:04:05.000, 0, 5\n", nil, 1, "--fields", false},
		{"headerless wrong field", "2026/01/02 03:04:05.000, 0, GPU-a, A100, 80 GiB, x, 1\n", nil, 1, `memory.used: "x" is not a size`, false},
		{"dmon truncated", "# gpu fb bar1\n# Idx MB MB\n 0 1", nil, 3, "2 columns, but the header names 3", false},
		{"dmon bad value", "# gpu fb\n# Idx MB\n 0 lots\n", nil, 3, `fb: "lots" is not a size`, false},
		{"dmon without fb", "# gpu sm mem\n# Idx % %\n 0 1 2\n", nil, 1, "no fb column", false},
		{"dmon no header", "# gpu fb\n", []Option{WithFormat(FormatDmon)}, 1, "", false},
		{"json truncated", "{\"ts\": 2, \"gpu\": 0,\n", []Option{WithFormat(FormatPynvmlJSONL)}, 1, "starts at line 1 does not end", false},
		{"json bad type", "{\"ts\": 2, \"gpu\": \"zero\", \"used\": 1}\n", nil, 1, "not a pynvml sample record", false},
		{"json garbage between", "Traceback (most recent call last):\n", []Option{WithFormat(FormatPynvmlJSONL)}, 1, "expected a JSON object", false},
		{"json no time", "{\"gpu\": 0, \"used\": 1}\n", []Option{WithFormat(FormatPynvmlJSONL)}, 1, "without a time", false},
		{"gpustat pretty error", "{\n \"query_time\": \"2026-01-01T00:00:00\",\n \"gpus\": [\n  {\"index\": 0, \"memory.used\": \"x\"}\n ]\n}\n", nil, 4, "not a gpustat", false},
		{"dcgm truncated", "DCGM_FI_DEV_FB_USED{gpu=\"1\",UU", []Option{WithFormat(FormatDCGMPrometheus)}, 1, "truncated line", false},
		{"dcgm bad value", "DCGM_FI_DEV_FB_USED{gpu=\"1\"} lots\n", []Option{WithFormat(FormatDCGMPrometheus)}, 1, `"lots" is not a number`, false},
		{"dcgm no fb", "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization\nDCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 1\n", nil, 2, "no DCGM_FI_DEV_FB_USED", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := readRows(t, "in", tt.in, tt.opts...)
			var pe *parse.Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %v (%T), want a *parse.Error", err, err)
			}
			if pe.Line != tt.line || pe.File != "in" {
				t.Errorf("error at %s:%d, want in:%d: %v", pe.File, pe.Line, tt.line, err)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not say %q", err, tt.msg)
			}
			if errors.Is(err, parse.ErrNotMine) != tt.notMin {
				t.Errorf("errors.Is(ErrNotMine) = %v", !tt.notMin)
			}
		})
	}
}

func TestSniff(t *testing.T) {
	for _, f := range []struct {
		file string
		want parse.Format
	}{
		{"query_gpu.csv", FormatQueryGPU}, {"query_gpu_noheader_nounits.csv", FormatQueryGPU},
		{"query_gpu_reordered.csv", FormatQueryGPU}, {"query_apps.csv", FormatQueryApps},
		{"query_apps_noheader.csv", FormatQueryApps}, {"dmon.txt", FormatDmon},
		{"dmon_mu.txt", FormatDmon}, {"pmon.txt", FormatPmon},
		{"pmon_mu_T.txt", FormatPmon}, {"pynvml.jsonl", FormatPynvmlJSONL}, {"pynvml_2.jsonl", FormatPynvmlJSONL},
	} {
		b, err := os.ReadFile(fixtures + f.file)
		if err != nil {
			t.Fatal(err)
		}
		if got := Sniff(b); got != f.want {
			t.Errorf("%s: %q, want %q", f.file, got, f.want)
		}
	}
	for in, want := range map[string]parse.Format{
		"":                    parse.FormatUnknown,
		"\x80\x04\x95":        parse.FormatUnknown,
		"a,b,c\n1,2,3\n":      parse.FormatUnknown,
		`{"traceEvents": []}`: parse.FormatUnknown,
		"# HELP go_goroutines x\ngo_goroutines 5\nDCGM_FI_DEV_FB_USED{gpu=\"0\"} 1\n": FormatDCGMPrometheus,
		"go_goroutines 5\nDCGM_FI_DEV_FB_USED{gpu=\"0\"} 1\n":                         FormatDCGMPrometheus,
		"#Entity   GPUTL   FBUSD\nID\nGPU 0     0       0\n":                          FormatDcgmiDmon,
		"========= COMPUTE-SANITIZER\n":                                               parse.FormatUnknown,
	} {
		if got := Sniff([]byte(in)); got != want {
			t.Errorf("Sniff(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestFieldUnreadable: pasted nvidia-smi outputs that hold no memory
// sample are errors naming the line, never an empty log read as clean
// (testdata/README.md says what each holds).
func TestFieldUnreadable(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		// The MIG devices box alone (was refused as no known format).
		{"nvitop8_mig_devices_cut.txt", ":17: only nvidia-smi's MIG devices box"},
		// -q cut before its FB Memory Usage section.
		{"sysmon12_q_cut_before_memory.txt", ":33: no GPU memory in this nvidia-smi output: the nvidia-smi -q report stops at line 33 inside GPU 0's section (from line 10), before its FB Memory Usage"},
		// dmon -s u: utilization only.
		{"telegraf5532_dmon_s_u_no_fb.txt", ":1: the dmon log has no fb column"},
		// dcgmi dmon -e of GPUTL and SMACT: no frame buffer field (was
		// refused as no known format, which did not say what to record).
		{"ddii_dcgmi_dmon_no_fb.txt", ":1: the dcgmi dmon log has no FBUSD column"},
		// DCGM's FB_FREE of two GPUs, cut before FB_USED: samples without a
		// used value, which read as "no findings" before.
		{"dcgmexporter736_hostname_lower_mig.txt", ":11: no sample holds a used-memory value"},
		// A scrape whose FB_USED line (13) is cut inside its labels, its
		// FB_FREE (line 10) whole (NVIDIA/gpu-operator#340): the figure
		// was logged and its line lost. Was "log ... DCGM_FI_DEV_FB_USED",
		// which the user had done; now the error is at line 13 and says
		// the line is cut.
		{"gpuoperator340_dcgm_fb_used_cut.prom", ":13: no sample holds a used-memory value (1 row read): the line that held one could not be read (DCGM_FI_DEV_FB_USED: unterminated label value (truncated line?)): the line is cut or damaged"},
		// DGX Spark (GB10, unified memory): memory.free, memory.total and
		// memory.used all [N/A]. Was the generic "no sample holds a
		// used-memory value (... missing or a placeholder)"; now it says
		// the GPU reports no device memory and what to record instead.
		{"unsloth10283_gb10_free_total_used_na.csv", ":2: no sample holds a used-memory value (1 row read): memory.used is [N/A] in every sample and memory.total is [N/A] too, as on a GPU with unified memory"},
		// The same GPU logged without its name or total: nothing tells the
		// device, so the error says what [N/A] may mean and what to log
		// to tell.
		{"sonar460_gb10_used_na.csv", ":6: no sample holds a used-memory value (5 rows read): memory.used is [N/A] in every sample, NVML gave no figure; a GPU with unified memory"},
		// GB10 logged without memory.used: was "log it with
		// --query-gpu=...,memory.used", which gives [N/A] there too; now
		// the row's name says why it would not help, and what would.
		{"unsloth10703_gb10_no_used_column.txt", ":2: the log has no memory.used column (fields: index,name,memory.total,memory.free), and it would not help: the NVIDIA GB10 has unified memory"},
		// The same GPU's plain table: "Not Supported" in its memory cell.
		// Was the generic error; now the same explanation as its CSV's.
		{"arctictraining345_gb10_table_not_supported.txt", ":12: no sample holds a used-memory value (1 row read): the NVIDIA GB10 has unified memory (the system's RAM, shared with the CPU), for which NVML reports no device memory (the memory cell is Not Supported in every sample), so no GPU memory trend can be read from this log: record the processes' GPU memory instead"},
	} {
		b, err := os.ReadFile(fixtures + "field/" + c.file)
		if err != nil {
			t.Fatal(err)
		}
		if Sniff(b) == parse.FormatUnknown {
			t.Errorf("%s: not recognised", c.file)
			continue
		}
		_, _, err = readRows(t, c.file, string(b))
		if err == nil || !strings.Contains(err.Error(), c.file+c.want) {
			t.Errorf("%s: error %v, want %q", c.file, err, c.want)
		}
	}
}

// TestDCGMLowercaseHostname: dcgm-exporter (NVIDIA/dcgm-exporter pull
// request #736, testdata/nvml/field/dcgmexporter736_hostname_lower_mig.txt)
// labels the host "hostname", where older versions wrote "Hostname". The
// line below is its FB_FREE line of GPU 1 with the metric renamed FB_USED
// (the paste is cut before its FB_USED lines): the host must be read, so
// that two hosts' GPU 1 stay two series.
func TestDCGMLowercaseHostname(t *testing.T) {
	in := `DCGM_FI_DEV_FB_USED{gpu="1",UUID="GPU-fc60126e-514d-3522-2828-c5daa8e99d85",pci_bus_id="00000000:B1:00.0",device="nvidia1",modelName="NVIDIA RTX 2000 Ada Generation",hostname="dcgm-exporter-wwwjh"} 11275
`
	rows, _, err := readRows(t, "dcgm736", in)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Host != "dcgm-exporter-wwwjh" || val(rows[0].Used) != mib(11275) {
		t.Errorf("rows %+v", rows)
	}
}

// A log's sampling instants (what the report calls its samples) count
// the times it was taken, not its rows: two GPUs of one tick are one
// instant whether their rows carry one timestamp or each its own a few
// ms apart (a sampler that stamps each GPU as it reads it); processes
// listed together are one; a process log's rows at new times are new
// instants, whatever process they are of.
func TestInstants(t *testing.T) {
	gpuCSV := func(skewMs int) string {
		var b strings.Builder
		b.WriteString("timestamp, index, memory.used [MiB], memory.total [MiB]\n")
		for i := 0; i < 5; i++ {
			for g := 0; g < 2; g++ {
				fmt.Fprintf(&b, "2026/11/30 10:00:0%d.%03d, %d, %d MiB, 81920 MiB\n", i, g*skewMs, g, 1000+i)
			}
		}
		return b.String()
	}
	var pynvml strings.Builder
	for i := 0; i < 3; i++ {
		for g := 0; g < 2; g++ {
			fmt.Fprintf(&pynvml, `{"ts": %d.%03d, "gpu": %d, "total": 85899345920, "used": 1073741824, "processes": [{"pid": %d, "used": 536870912}]}`+"\n", 1796025972+i, 3*g, g, 100+g)
		}
	}
	apps := "timestamp, gpu_uuid, pid, process_name, used_gpu_memory [MiB]\n" +
		"2026/11/30 10:00:00.100, GPU-a, 1, python3, 10 MiB\n" +
		"2026/11/30 10:00:00.100, GPU-a, 2, python3, 20 MiB\n" +
		"2026/11/30 10:00:01.100, GPU-a, 1, python3, 10 MiB\n" +
		"2026/11/30 10:00:02.100, GPU-a, 3, python3, 30 MiB\n"
	for _, tt := range []struct {
		name, in       string
		rows, instants int64
	}{
		{"query-gpu, one timestamp a tick", gpuCSV(0), 10, 5},
		{"query-gpu, each GPU stamped", gpuCSV(2), 10, 5},
		{"pynvml, a record per GPU", pynvml.String(), 12, 3},
		{"query-apps", apps, 4, 3},
	} {
		rows, meta, err := readRows(t, "x", tt.in)
		if err != nil || int64(len(rows)) != tt.rows || meta.Instants != tt.instants {
			t.Errorf("%s: %v, %d rows, %d instants; want %d, %d", tt.name, err, len(rows), meta.Instants, tt.rows, tt.instants)
		}
	}
}

// TestUnknownProcessMemoryKept: a process whose memory a CSV or JSON log
// gives as a placeholder ("[N/A]", "[Not Supported]", null: what NVML
// gives under WDDM, some vGPU and container setups) is a row with its
// memory null, never 0 and never dropped, and one warning counts them.
func TestUnknownProcessMemoryKept(t *testing.T) {
	for _, c := range []struct {
		name, in string
		// procs: the process rows; unknown: of them, with used null;
		// warn: what the warning must say (the rows, the first's line and
		// the pids).
		procs, unknown int
		warn           string
	}{
		{"apps.csv", "timestamp, gpu_uuid, pid, process_name, used_memory [MiB]\n" +
			"2026/12/02 10:00:00.000, GPU-aaaa, 12345, python, [N/A]\n" +
			"2026/12/02 10:00:00.000, GPU-bbbb, 12346, python, 60188 MiB\n" +
			"2026/12/02 10:00:01.000, GPU-aaaa, 12345, python, [Not Supported]\n", 3, 2,
			"2 process rows (the first at line 2; pid 12345) give no memory for their process"},
		{"pynvml.jsonl", `{"ts": 1764669600, "gpu": 0, "total": 85520809984, "used": 42072408064, "free": 43448401920, "processes": [{"pid": 12345, "usedGpuMemory": null}, {"pid": 12346, "usedGpuMemory": 1048576}]}` + "\n", 2, 1,
			"1 process row (line 1; pid 12345) gives no memory for its process"},
		{"gpustat.json", `{"hostname": "h", "query_time": "2026-12-02T10:00:00.000000", "gpus": [{"index": 0, "name": "NVIDIA H100", "memory.used": 40123, "memory.total": 81559, "processes": [{"pid": 12345, "command": "python", "gpu_memory_usage": null}]}]}` + "\n", 1, 1,
			"1 process row (line 1; pid 12345) gives no memory for its process"},
	} {
		rows, meta, err := readRows(t, c.name, c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		procs, unknown := 0, 0
		for _, r := range rows {
			if r.PID != nil {
				procs++
				if r.Used == nil {
					unknown++
				}
			}
		}
		if procs != c.procs || unknown != c.unknown {
			t.Errorf("%s: %d process rows, %d with used null; want %d, %d", c.name, procs, unknown, c.procs, c.unknown)
		}
		w := strings.Join(meta.Warnings.Strings(), "\n")
		if !strings.Contains(w, c.warn) || !strings.Contains(w, "kept with their memory unknown, not 0") {
			t.Errorf("%s: warnings %q", c.name, w)
		}
	}
}

// TestDcgmiDmonLayout: dcgmi dmon's output as DCGM's dcgmi/DeviceMonitor.cpp
// prints it: "#Entity" and the short field names, then a units line
// starting with "ID" (both repeated every 14 rows), each row the entity
// group and id ("GPU 1", "GPU-I 3": DCGM's MIG instance entity) and the
// values, "N/A" where DCGM has none. FBUSD, FBFRE and FBTTL are MiB
// (DCGM_FI_DEV_FB_USED, _FREE, _TOTAL). Two GPUs over three ticks: a tick
// ends where a GPU id does not increase; rows are 1 s apart (dcgmi's
// default -d 1000); the MIG instance's rows are not read, and the warning
// says so; used + free falls 512 MiB short of total on GPU 0 (16384 -
// 12000 - 3872): the reservation, left out of FBUSD.
func TestDcgmiDmonLayout(t *testing.T) {
	in := `#Entity   FBUSD             FBFRE             FBTTL
ID
GPU 0     12000             3872              16384
GPU 1     N/A               N/A               16384
GPU-I 3   100               900               1024
GPU 0     12100             3772              16384
GPU 1     200               15672             16384
#Entity   FBUSD             FBFRE             FBTTL
ID
GPU 0     12200             3672              16384
GPU 1     300               15572             16384
`
	rows, meta, err := readRows(t, "dmon.txt", in)
	if err != nil {
		t.Fatal(err)
	}
	if meta.Format != FormatDcgmiDmon || meta.Clock != ClockRowOrder || meta.Instants != 3 {
		t.Errorf("format %q clock %v instants %d, want dcgmi-dmon, row order, 3", meta.Format, meta.Clock, meta.Instants)
	}
	type want struct {
		t    int64
		gpu  int32
		used *int64
	}
	u := func(m int64) *int64 { v := mib(m); return &v }
	wants := []want{{0, 0, u(12000)}, {0, 1, nil}, {1e6, 0, u(12100)}, {1e6, 1, u(200)}, {2e6, 0, u(12200)}, {2e6, 1, u(300)}}
	if len(rows) != len(wants) {
		t.Fatalf("%d rows, want %d: %+v", len(rows), len(wants), rows)
	}
	for i, w := range wants {
		r := rows[i]
		if r.TimeUs != w.t || r.GPU == nil || *r.GPU != w.gpu || (r.Used == nil) != (w.used == nil) || r.Used != nil && *r.Used != *w.used {
			t.Errorf("row %d: %+v, want t=%d gpu=%d used=%v", i, r, w.t, w.gpu, w.used)
		}
	}
	if r := rows[0]; val(r.Reserved) != mib(512) || r.Convention != "excludes-reserved" {
		t.Errorf("GPU 0: reserved %d, convention %q; want 512 MiB, excludes-reserved", val(r.Reserved), r.Convention)
	}
	if !strings.Contains(strings.Join(meta.Warnings.Strings(), "\n"), "1 GPU-I row not read") {
		t.Errorf("warnings %q: want the GPU-I row counted", meta.Warnings.Strings())
	}
}

// TestTaggedMessages: in a Kubernetes pod under HAMi, HAMi-core is
// preloaded into every process, nvidia-smi included, and prints its exit
// messages into nvidia-smi's output
// (testdata/nvml/field/hami_t4_query_gpu_msgs.txt). They are not rows:
// the log's one row (Tesla T4, 2150 of 4096 MiB, the pod's limit as
// HAMi-core reports it) is read, the two message lines are skipped and
// counted, and a warning names the first (was: an error at line 3, "1
// fields, but the header names 3", and no report). A row whose first
// field is a placeholder ("[N/A], 2150 MiB") is still a row.
func TestTaggedMessages(t *testing.T) {
	rows, meta := readFile(t, fixtures+"field/hami_t4_query_gpu_msgs.txt")
	if len(rows) != 1 || val(rows[0].Used) != mib(2150) || val(rows[0].Total) != mib(4096) || rows[0].GPUName != "Tesla T4" {
		t.Fatalf("rows %+v, want one of Tesla T4 at 2150 of 4096 MiB", rows)
	}
	if meta.Skipped != 2 {
		t.Errorf("%d lines skipped, want HAMi-core's 2", meta.Skipped)
	}
	if w := strings.Join(meta.Warnings.Strings(), "\n"); !strings.Contains(w, "line 3: \"[HAMI-core Msg(") {
		t.Errorf("warnings %q: want line 3's message named", w)
	}
	rows, _, err := readRows(t, "na.csv", "name, memory.used [MiB], memory.total [MiB]\n[N/A], 2150 MiB, 4096 MiB\n")
	if err != nil || len(rows) != 1 || val(rows[0].Used) != mib(2150) {
		t.Errorf("a row whose first field is [N/A]: %+v, %v", rows, err)
	}
}

// TestTaggedMessageFirst: HAMi-core prints its start message
// ("[HAMI-core Msg(...libvgpu.c:836)]: Initializing.....") when it loads
// into a process, before nvidia-smi writes its header, so a --query-gpu
// log of a HAMi pod starts with another program's line
// (testdata/nvml/field/hami_init_then_query_gpu_msgs.txt: the T4 log of
// TestTaggedMessages behind that line). The layout is still recognised
// by the header after it, and the log read as the T4 log is: one row of
// 2150 of 4096 MiB, now three message lines skipped, the warning naming
// line 1 (was: "not an NVML sample log" at line 1). A JSON array's first
// line ("[{...}]") is not taken for such a message.
func TestTaggedMessageFirst(t *testing.T) {
	path := fixtures + "field/hami_init_then_query_gpu_msgs.txt"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := Sniff(b); got != FormatQueryGPU {
		t.Fatalf("Sniff: %q, want %q", got, FormatQueryGPU)
	}
	rows, meta := readFile(t, path)
	if len(rows) != 1 || val(rows[0].Used) != mib(2150) || val(rows[0].Total) != mib(4096) {
		t.Fatalf("rows %+v, want one at 2150 of 4096 MiB", rows)
	}
	if meta.Skipped != 3 {
		t.Errorf("%d lines skipped, want HAMi-core's 3", meta.Skipped)
	}
	if w := strings.Join(meta.Warnings.Strings(), "\n"); !strings.Contains(w, "line 1: \"[HAMI-core Msg(") {
		t.Errorf("warnings %q: want line 1's message named", w)
	}
	if got := Sniff([]byte(`[{"gpu": 0, "used": [1, 2]}, {"gpu": 1}]` + "\n")); got == FormatQueryGPU {
		t.Errorf("a JSON array taken for a tagged message: %q", got)
	}
	// HAMi-core is preloaded into nvidia-smi dmon and dcgmi dmon as well:
	// with its start message before them and its exit message after, the
	// real logs dmon.txt and the RTX 2080 Ti's dcgmi dmon log read as they
	// do alone, in the same layout, with the two lines skipped.
	const start = "[HAMI-core Msg(28:140561996502848:libvgpu.c:836)]: Initializing.....\n"
	const exit = "[HAMI-core Msg(28:140561996502848:multiprocess_memory_limit.c:434)]: Calling exit handler 28\n"
	for _, f := range []struct {
		file string
		want parse.Format
	}{{"dmon.txt", FormatDmon}, {"field/agihpc_dcgmi_dmon_rtx2080ti.txt", FormatDcgmiDmon}} {
		b, err := os.ReadFile(fixtures + f.file)
		if err != nil {
			t.Fatal(err)
		}
		alone, _, err := readRows(t, f.file, string(b))
		if err != nil {
			t.Fatal(err)
		}
		in := start + string(b) + exit
		if got := Sniff([]byte(in)); got != f.want {
			t.Errorf("%s behind HAMi-core's message: Sniff %q, want %q", f.file, got, f.want)
		}
		rows, meta, err := readRows(t, f.file, in)
		if err != nil || len(rows) != len(alone) || meta.Skipped != 2 {
			t.Errorf("%s between HAMi-core's messages: %d rows, %d skipped, %v; want %d rows, 2 skipped", f.file, len(rows), meta.Skipped, err, len(alone))
		}
	}
}

// TestAccountedProcesses: a Slurm epilog's GPU report
// (testdata/nvml/field/mila_slurm_gpu_report_accounting.txt, Mila's
// docs) prints nvidia-smi -q -d ACCOUNTING after the job: each process's
// "Max memory usage" over its life (pids 3072883 and 3072884, 998 MiB
// each, lines 17 and 28), then the table, both GPUs at 0 MiB. The table
// is read; the peaks are not samples (no time of their own), and were
// dropped without a word: a warning now gives their count and the
// largest, at the first's line. The quote is indented 6 spaces, the -q
// report's sections with it (TestIndentedQReport).
func TestAccountedProcesses(t *testing.T) {
	rows, meta := readFile(t, fixtures+"field/mila_slurm_gpu_report_accounting.txt")
	if len(rows) != 2 || val(rows[0].Used) != 0 || val(rows[1].Total) != mib(46068) {
		t.Errorf("rows %+v: want GPUs 0 and 1 at 0 of 46068 MiB", rows)
	}
	w := strings.Join(meta.Warnings.Strings(), "\n")
	for _, want := range []string{"line 17:", "2 processes' largest memory use", "at most 998 MiB, pid 3072883 on GPU 0", "not read as samples"} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings %q: want %q", w, want)
		}
	}
}

// TestIndentedQReport: an nvidia-smi -q report quoted indented (a
// Markdown block, a list item, a CI log's prefix; Mila's docs indent
// theirs 6 spaces) reads as it does flush left: its sections' depths are
// taken from its "NVSMI LOG" line's indentation (was: "no GPU memory in
// this nvidia-smi output", exit 2). The field's -q outputs of driver 375
// (FB Memory Usage without Reserved) and 550 (two H100 NVL, "Processes :
// None"), indented here.
func TestIndentedQReport(t *testing.T) {
	for _, f := range []string{"field/gnomeapplet356_q_d_memory_2017.txt", "field/thamada_h100nvl_q_processes_none.txt"} {
		b, err := os.ReadFile(fixtures + f)
		if err != nil {
			t.Fatal(err)
		}
		want, _, err := readRows(t, f, string(b))
		if err != nil {
			t.Fatal(err)
		}
		for _, pad := range []string{"      ", "\t"} {
			var in strings.Builder
			for _, line := range strings.SplitAfter(string(b), "\n") {
				if line != "" {
					in.WriteString(pad + line)
				}
			}
			got, _, err := readRows(t, f, in.String())
			if err != nil {
				t.Errorf("%s indented %q: %v", f, pad, err)
				continue
			}
			if rowsString(got) != rowsString(want) {
				t.Errorf("%s indented %q: rows %s, want %s", f, pad, rowsString(got), rowsString(want))
			}
		}
	}
}

// rowsString renders rows with their nullable values dereferenced.
func rowsString(rows []row) string {
	var b strings.Builder
	p32 := func(p *int32) string {
		if p == nil {
			return "null"
		}
		return fmt.Sprint(*p)
	}
	p64 := func(p *int64) string {
		if p == nil {
			return "null"
		}
		return fmt.Sprint(*p)
	}
	for _, r := range rows {
		fmt.Fprintf(&b, "{t=%d host=%q uuid=%q name=%q gpu=%s pid=%s process=%q used=%s total=%s free=%s reserved=%s %s %s}",
			r.TimeUs, r.Host, r.UUID, r.GPUName, p32(r.GPU), p64(r.PID), r.Process, p64(r.Used), p64(r.Total), p64(r.Free), p64(r.Reserved), r.Source, r.Convention)
	}
	return b.String()
}

// TestCommentLines: a logging script that writes a comment before
// nvidia-smi's output (echo "# GPU memory log" > gpu.log; nvidia-smi
// --query-gpu=... -l 5 >> gpu.log) leaves a CSV log whose first line is
// no header (testdata/nvml/field/gpulog_comment_then_query_gpu.csv: that
// line, then a course's V100 log). It is recognised and read, the comment
// skipped with a warning (was: "not an NVML sample log", exit 2), and so
// is a comment between two appended logs.
func TestCommentLines(t *testing.T) {
	b, err := os.ReadFile(fixtures + "field/gpulog_comment_then_query_gpu.csv")
	if err != nil {
		t.Fatal(err)
	}
	if f := Sniff(b); f != FormatQueryGPU {
		t.Fatalf("Sniff = %q, want %q", f, FormatQueryGPU)
	}
	rows, meta, err := readRows(t, "gpu.log", string(b)+"# run 2\n"+strings.SplitN(string(b), "\n", 2)[1])
	if err != nil {
		t.Fatal(err)
	}
	// 3 rows, then the same 3 again after the second comment (the log
	// appended twice); used 1, 4 and 4 MiB.
	if len(rows) != 6 || val(rows[0].Used) != mib(1) || val(rows[5].Used) != mib(4) {
		t.Errorf("rows %s: want 6, 1 MiB first, 4 MiB last", rowsString(rows))
	}
	if meta.Skipped != 2 || !strings.Contains(strings.Join(meta.Warnings.Strings(), "\n"), `line 1: "# GPU memory log" is a comment`) {
		t.Errorf("%d skipped, warnings %q: want both comments skipped, the first named", meta.Skipped, meta.Warnings.Strings())
	}
}

// A GPU row that names a unified-memory GPU (hand-made: the field logs
// found name none beside a memory.used column) is explained by its name;
// "[Insufficient Permissions]" is not a device's kind and keeps the
// generic error.
func TestUnifiedMemoryNamed(t *testing.T) {
	_, _, err := readRows(t, "jetson.csv", "timestamp, name, memory.used [MiB]\n2025/11/24 14:08:55.751, Orin, [N/A]\n")
	// An Orin's driver (nvgpu) reports no process memory through NVML
	// either: its own tools do (f48n1; a GB10's advice is --query-compute-apps).
	if err == nil || !strings.Contains(err.Error(), "the Orin has unified memory") || !strings.Contains(err.Error(), "tegrastats") || strings.Contains(err.Error(), "--query-compute-apps=") {
		t.Errorf("%v", err)
	}
	_, _, err = readRows(t, "perm.csv", "timestamp, name, memory.total [MiB], memory.used [MiB]\n2025/11/24 14:08:55.751, NVIDIA A100, [Insufficient Permissions], [Insufficient Permissions]\n")
	if err == nil || strings.Contains(err.Error(), "unified") || !strings.Contains(err.Error(), "missing or a placeholder") {
		t.Errorf("%v", err)
	}
}
