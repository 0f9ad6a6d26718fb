"""report.md and chart.png from the results of `benchmarks/run`. Course module 8.

The report states what was measured and how before any number: the date, the machine, the
thread count, each runtime's configuration and the exact command. Then one table for the
models and one for the GEMMs, the benchmarks that were not timed and why, and the noise.
"""

import os

NOT_TIMED_REASONS = {
    "mismatch": "outputs disagree with ONNX Runtime",
    "unsupported": "minic lacks an op",
    "error": "minic failed",
}


def number(x):
    """A time, ratio or rate with three significant digits, without exponents."""
    if x is None:
        return "-"
    if abs(x) >= 100:
        return f"{x:.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    if abs(x) >= 1:
        return f"{x:.2f}"
    return f"{x:.3f}"


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


SIDE_NAMES = {"minic": "minic", "ort": "ORT", "ov": "OpenVINO", "numpy": "numpy"}


def noise_note(summary):
    """The note column: OpenVINO's failure, if it failed, and the noisy sides."""
    notes = [f"OpenVINO not timed: {summary['ov_error']}"] if "ov_error" in summary else []
    noisy = [f"{SIDE_NAMES[side]} rounds {summary[side]['round_spread']:.2f}x apart"
             for side in summary["noisy_sides"]]
    if noisy:
        notes.append("noisy: " + ", ".join(noisy))
    return "; ".join(notes)


def header_lines(results):
    meta = results["meta"]
    minic = meta["minic"]
    threads = meta["threads"]
    lines = [
        "# minic benchmarks",
        "",
        f"- **Date**: {meta['date']}",
        f"- **Machine**: {meta['cpu']}, {meta['cores']} cores available "
        f"({' '.join(meta['cpu_flags']) or 'no AVX'})",
        f"- **Threads**: {threads} (minic `--threads {threads}`; ORT intra-op {threads}, "
        f"inter-op 1; numpy's BLAS `OPENBLAS_NUM_THREADS={threads}`)",
        f"- **minic**: {minic['version']}, backend `{minic['backend']}`, passes "
        f"`{minic['passes']}`" + (f", external back ends `{minic['backends']}` (their "
                                  "kernels beside minic's)" if minic.get("backends") else ""),
        f"- **ONNX Runtime** {meta['onnxruntime']}: CPU execution provider, every graph "
        "optimisation on (ORT_ENABLE_ALL), sequential execution",
        f"- **OpenVINO** {meta['openvino']}: CPU plugin, f32 inference precision, "
        f"{threads} inference thread(s), one stream, latency hint; its outputs checked "
        "against ORT's" if meta.get("openvino") else
        "- **OpenVINO**: not installed (`pip install openvino`), not run",
        f"- **numpy** {meta['numpy']} ({numpy_blas(results)})",
        f"- **Method**: outputs checked against ORT first (rtol 1e-3, atol 1e-4; the int8 "
        f"models: cosine similarity at least 0.999); then "
        f"{meta['rounds']} rounds of minic then ORT (then OpenVINO, then numpy), each in "
        "its own child "
        f"process, {meta['warmup']} untimed run(s) and K timed runs each "
        f"(K: {k_text(meta['repeat'])}); load average {load(meta.get('load_average_start'))} at "
        f"the start, {load(meta.get('load_average_end'))} at the end",
        f"- **Command**: `{meta['command']}`",
    ]
    if minic["backend"] == "interp":
        lines += ["", "minic ran on its reference interpreter (`--backend interp`): plain "
                  "loops, one thread, no compilation. The ratios show the interpreter's "
                  "speed, not the compiler's."]
    return lines


def k_text(repeat):
    if repeat == "auto":
        return "chosen per benchmark from the check's run time, see rounds x runs"
    return str(repeat)


def load(values):
    return "/".join(f"{v:.1f}" for v in values) if values else "?"


def numpy_blas(results):
    for entry in results["benchmarks"]:
        for one in entry.get("rounds", []):
            if "numpy" in one:
                return one["numpy"]["blas"]
    return "not run"


def model_rows(entries):
    rows = []
    for e in entries:
        s = e["summary"]
        m, o = s["minic"], s["ort"]
        v = s.get("ov", {})
        rows.append([e["name"], number(m["median_ms"]), number(o["median_ms"]),
                     number(v.get("median_ms")), f"**{number(s['ratio'])}**",
                     f"**{number(s.get('ratio_ov'))}**", f"**{number(s['ratio_best'])}**",
                     number(m["compile_ms"]), number(o["session_ms"]),
                     number(v.get("session_ms")), number(m["peak_rss_mb"]),
                     number(o["peak_rss_mb"]), f"{e['rounds_run']}x{e['repeat']}",
                     noise_note(s)])
    return rows


def gemm_rows(entries):
    rows = []
    for e in entries:
        s = e["summary"]
        row = ["x".join(str(d) for d in e["mkn"]), number(e["flops"] / 1e6)]
        for side in ("minic", "ort", "ov", "numpy"):
            row.append(number(s[side]["gflops"]) if side in s else "-")
        for side in ("minic", "ort", "numpy"):
            percent = s[side].get("percent_of_peak")
            row.append("-" if percent is None else f"{percent:.1f}%")
        row += [f"**{number(s['ratio'])}**", f"**{number(s['ratio_best'])}**",
                f"{e['rounds_run']}x{e['repeat']}", noise_note(s)]
        rows.append(row)
    return rows


def peak_line(results):
    peak = results.get("fma_peak")
    if peak is None:
        return None
    if "error" in peak:
        return f"FMA peak: not measured ({peak['error']}); the % of peak columns are empty."
    by_threads = peak["by_threads"]
    first = next(iter(by_threads.values()))
    parts = [f"{v['gflops']:.0f} GFLOP/s on {k} thread{'s' if k != '1' else ''}"
             for k, v in by_threads.items()]
    line = (f"FMA peak measured on this CPU (benchmarks/fma_peak.cpp: {first['isa']}, "
            f"{first['chains']} independent chains of {first['lanes']}-float FMAs, best of "
            "20 short trials, before and after the benchmarks): " + ", ".join(parts) +
            f". The % columns are against the peak at {results['meta']['threads']} "
            "thread(s).")
    over = [e["name"] for e in results["benchmarks"] if "summary" in e and e["kind"] == "gemm"
            and any((e["summary"][s].get("percent_of_peak") or 0) > 100
                    for s in ("minic", "ort", "numpy"))]
    if over:
        line += (f" **Above 100% ({', '.join(over)}): other processes held the CPU during "
                 "both peak measurements, so the peak is underestimated; re-run on a "
                 "quieter machine.**")
    return line


def sections(results):
    """The model table, the GEMM table and the rest, as Markdown lines."""
    entries = results["benchmarks"]
    timed = [e for e in entries if "summary" in e]
    models = [e for e in timed if e["kind"] == "model"]
    gemms = [e for e in timed if e["kind"] == "gemm"]
    lines = []
    if models:
        lines += ["", "## Models", "", table(
            ["model", "minic median ms", "ORT median ms", "OpenVINO median ms", "minic/ORT",
             "minic/OpenVINO", "minic/faster peer", "minic compile ms", "ORT session ms",
             "OpenVINO compile ms", "minic peak MB", "ORT peak MB", "rounds x runs", "note"],
            model_rows(models))]
        baseline = [r["ort"]["baseline_rss_mb"] for e in models for r in e["rounds"]]
        lines += ["", f"ORT's peak memory is its whole Python process's: about "
                  f"{min(baseline):.0f} MB of it is there before the session is made "
                  "(interpreter, numpy, onnxruntime). minic's is the `minic bench` process."]
    if gemms:
        lines += ["", "## GEMM (float32 MatMul, A[M,K] @ B[K,N], B a constant)", "",
                  peak_line(results) or "", "", table(
                      ["M x K x N", "MFLOP", "minic GFLOP/s", "ORT GFLOP/s",
                       "OpenVINO GFLOP/s", "numpy GFLOP/s", "minic % peak", "ORT % peak",
                       "numpy % peak", "minic/ORT", "minic/faster peer", "rounds x runs",
                       "note"], gemm_rows(gemms))]
    not_timed = [e for e in entries if "summary" not in e]
    if not_timed:
        lines += ["", "## Not timed", ""]
        for e in not_timed:
            status = e["check"]["status"]
            detail = " ".join(e["check"]["detail"].split())
            lines.append(f"- **{e['name']}**: {NOT_TIMED_REASONS.get(status, status)} "
                         f"({status}): {detail[:400]}")
    noisy = [e["name"] for e in timed if e["summary"]["noisy_sides"]]
    lines += ["", "## Noise", "",
              "Ratios are taken round by round (round i's minic median over round i's ORT "
              "median, OpenVINO median, or the faster of the two), then their median is "
              "reported, so a slow spell of the machine falls on both sides of a pair. A side whose slowest round median is more "
              f"than {results['meta']['noise_spread']}x its fastest is marked noisy."]
    if noisy:
        lines.append(f"This run: {len(noisy)} of {len(timed)} benchmarks were noisy "
                     f"({', '.join(noisy)}); read their numbers with care.")
    else:
        lines.append(f"This run: none of the {len(timed)} timed benchmarks was noisy.")
    return lines


def write_report(results, path):
    with open(path, "w") as f:
        f.write("\n".join(header_lines(results) + sections(results)) + "\n")


def write_chart(results, path):
    """chart.png: minic/ORT per benchmark, and GFLOP/s per GEMM against the FMA peak.
    Returns a line saying what was written (or why not)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib import ticker
    except ImportError:
        return "matplotlib is not installed: no chart.png (pip install matplotlib)"
    timed = [e for e in results["benchmarks"] if "summary" in e]
    gemms = [e for e in timed if e["kind"] == "gemm"]
    figure, (left, right) = plt.subplots(1, 2, figsize=(14, 0.35 * len(timed) + 3.5))

    if timed:
        names = [e["name"] for e in timed]
        ratios = [e["summary"]["ratio"] for e in timed]
        rows = range(len(timed))
        colors = ["#c44" if r > 1 else "#4a4" for r in ratios]
        left.hlines(rows, 1.0, ratios, colors=colors, linewidth=3)
        left.scatter(ratios, rows, color=colors, zorder=3)
        for row, ratio in zip(rows, ratios):
            left.annotate(f" {number(ratio)}", (ratio, row), va="center")
        left.axvline(1.0, color="black", linewidth=1)
        left.set_xscale("log")
        left.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        left.xaxis.set_minor_formatter(ticker.NullFormatter())
        left.set_xlim(min(min(ratios), 1.0) / 1.5, max(max(ratios), 1.0) * 1.8)
        left.set_yticks(list(rows), names)
        left.set_ylim(len(timed) - 0.5, -0.5)
        left.set_xlabel("minic / ORT latency (median of paired rounds; > 1: minic slower)")
    left.set_title(f"minic ({results['meta']['minic']['backend']}) vs ONNX Runtime")

    if gemms:
        labels = ["x".join(str(d) for d in e["mkn"]) for e in gemms]
        positions = range(len(gemms))
        width = 0.27
        for offset, side, label in ((-width, "minic", "minic"), (0, "ort", "ONNX Runtime"),
                                    (width, "numpy", "numpy")):
            right.bar([p + offset for p in positions],
                      [e["summary"][side]["gflops"] for e in gemms], width, label=label)
        peak = results.get("fma_peak", {}).get("by_threads", {})
        threads = str(results["meta"]["threads"])
        if threads in peak:
            right.axhline(peak[threads]["gflops"], color="black", linestyle="--",
                          label=f"FMA peak, {threads} thread(s)")
        right.set_xticks(list(positions), labels, rotation=30)
        right.set_ylabel("GFLOP/s (linear: the peak is the roof)")
        right.legend(loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=4,
                     fontsize="small")
    else:
        right.text(0.5, 0.5, "no GEMM in this run", ha="center", va="center")
    right.set_title("GEMM throughput (float32)")
    figure.suptitle(f"{results['meta']['cpu']}, {results['meta']['threads']} thread(s), "
                    f"{results['meta']['date']}")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return f"wrote {os.path.basename(path)}"
