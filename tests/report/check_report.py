#!/usr/bin/env python3
"""`minic report` in a real browser (ctest report/*).

    check_report.py --minic build/minic --out DIR [--chromium PATH] [MODEL...]

For each model (default: examples/models/mlp.onnx, with a tuning database made here),
writes the report, checks that it is one self-contained page (its five sections, inline
SVG, nothing fetched: no script, no src or href to another file, no URL but the SVG
namespace), then loads it in headless Chromium and checks the screenshot: it must not be
blank (enough pixels that are not the background, in more than one colour). With
--no-browser, only the page checks run (for the light models, where the browser adds
nothing but time).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys

SECTIONS = ["1. The graph", "2. The kernels", "3. The memory plan", "4. The profile"]


def run(command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"{' '.join(command)} exited {result.returncode}:\n{result.stderr}")
    return result.stdout


def check_page(path, tuned):
    with open(path, encoding="utf-8") as file:
        html = file.read()
    for section in SECTIONS + (["5. Tuning"] if tuned else []):
        if f"<h2>{section}" not in html:
            sys.exit(f"{path}: no section '{section}'")
    if html.count("<svg") < 4:
        sys.exit(f"{path}: {html.count('<svg')} drawings, expected 4 or more")
    outside = [u for u in re.findall(r"https?://[^\"' )]+", html)
               if u != "http://www.w3.org/2000/svg"]
    if outside or "<script" in html or re.search(r"\s(src|href)=", html):
        sys.exit(f"{path}: not self-contained ({outside[:3] or 'script, src or href'})")


def check_screenshot(chromium, page, png):
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                    "--hide-scrollbars", f"--screenshot={png}", "--window-size=1200,1800",
                    "file://" + os.path.abspath(page)], capture_output=True, timeout=120)
    if not os.path.exists(png):
        sys.exit(f"{chromium} wrote no screenshot of {page}")
    import matplotlib.image
    pixels = matplotlib.image.imread(png)[..., :3]
    background = (pixels.min(axis=2) > 0.97).mean()
    colours = len({tuple(p) for p in (pixels[::7, ::7].reshape(-1, 3) * 8).astype(int)})
    if background > 0.995 or colours < 4:
        sys.exit(f"{png}: the page looks blank ({background:.1%} background, {colours} "
                 "colours)")
    print(f"{png}: {1 - background:.1%} of the page drawn, {colours} colours")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--minic", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--chromium", default="")
    parser.add_argument("--no-browser", action="store_true")
    parser.add_argument("models", nargs="*")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    models = args.models or [os.path.join(root, "examples", "models", "mlp.onnx")]
    args.chromium = args.chromium or shutil.which("chromium")
    if not args.no_browser and not args.chromium:
        sys.exit("no chromium on the PATH: scripts/setup.sh installs Debian's chromium")
    for model in models:
        name = os.path.splitext(os.path.basename(model))[0]
        page = os.path.join(args.out, name + ".html")
        command = [args.minic, "report", model, "-o", page]
        tuned = not args.models
        if tuned:
            db = os.path.join(args.out, name + ".jsonl")
            if os.path.exists(db):
                os.remove(db)
            run([args.minic, "tune", model, "-o", db, "--trials", "8", "--per-round", "4"])
            command += ["--records", db]
        run(command)
        check_page(page, tuned)
        if not args.no_browser:
            check_screenshot(args.chromium, page, os.path.join(args.out, name + ".png"))
        print(f"{page}: checked")


if __name__ == "__main__":
    main()
