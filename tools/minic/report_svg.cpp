// The drawings of `minic report` (report_svg.h). Course module 1.
//
// Chapter: docs/module1-overview.md#the-driver-and-the-minic-tool
#include "report_svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace minic::cli {
namespace {

constexpr int kNodeWidth = 150;
constexpr int kNodeHeight = 26;
constexpr int kColumn = 190;  // from one layer of nodes to the next
constexpr int kRow = 38;
constexpr int kMargin = 16;

const char* const kLineColours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

std::string svg_open(int width, int height) {
  return fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
                     "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" font-size=\"11\">\n",
                     width, height);
}

std::string short_text(const std::string& text, size_t length) {
  return text.size() <= length ? text : text.substr(0, length - 1) + "…";
}

}  // namespace

std::string escape_html(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string group_colour(int group) {
  if (group < 0) return "#ffffff";
  return fmt::format("hsl({}, 70%, 82%)", (group * 47) % 360);
}

std::string graph_svg(const Graph& graph, const std::map<std::string, int>& group_of) {
  // Layers: a node one to the right of the latest of its producers (inputs: layer 0).
  std::map<const Node*, int> layer;
  std::map<const Node*, int> row;
  std::vector<int> rows_in_layer;
  for (const Node* node : graph.nodes()) {
    int at = 1;
    for (const Value* input : node->inputs()) {
      if (input && input->producer()) at = std::max(at, layer[input->producer()] + 1);
    }
    layer[node] = at;
    if (static_cast<int>(rows_in_layer.size()) <= at) rows_in_layer.resize(at + 1, 0);
    row[node] = rows_in_layer[at]++;
  }
  int inputs_rows = static_cast<int>(graph.inputs().size());
  int most_rows = inputs_rows;
  for (int rows : rows_in_layer) most_rows = std::max(most_rows, rows);
  int layers = static_cast<int>(rows_in_layer.size());
  auto x_of = [](int l) { return kMargin + l * kColumn; };
  auto y_of = [](int r) { return kMargin + r * kRow; };
  std::map<const Value*, std::pair<int, int>> source;  // where a value's edge starts
  for (int i = 0; i < inputs_rows; ++i) {
    source[graph.inputs()[i]] = {x_of(0) + kNodeWidth, y_of(i) + kNodeHeight / 2};
  }
  for (const Node* node : graph.nodes()) {
    for (const Value* output : node->outputs()) {
      source[output] = {x_of(layer[node]) + kNodeWidth, y_of(row[node]) + kNodeHeight / 2};
    }
  }

  std::string svg = svg_open(x_of(std::max(layers, 1)) + kMargin,
                             y_of(std::max(most_rows, 1)) + kMargin);
  for (const Node* node : graph.nodes()) {  // edges first, under the boxes
    int x = x_of(layer[node]);
    int y = y_of(row[node]) + kNodeHeight / 2;
    for (const Value* input : node->inputs()) {
      auto from = input ? source.find(input) : source.end();
      if (from == source.end()) continue;  // a constant
      svg += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#999\"/>\n",
                         from->second.first, from->second.second, x, y);
    }
  }
  for (int i = 0; i < inputs_rows; ++i) {
    const Value* input = graph.inputs()[i];
    svg += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"13\" fill=\"#eee\" "
        "stroke=\"#666\"><title>input %{}</title></rect>\n"
        "<text x=\"{}\" y=\"{}\">%{}</text>\n",
        x_of(0), y_of(i), kNodeWidth, kNodeHeight, escape_html(input->name()), x_of(0) + 8,
        y_of(i) + 17, escape_html(short_text(input->name(), 22)));
  }
  for (const Node* node : graph.nodes()) {
    auto group = group_of.find(node->output(0)->name());
    int x = x_of(layer[node]);
    int y = y_of(row[node]);
    svg += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"#333\">"
        "<title>{}</title></rect>\n<text x=\"{}\" y=\"{}\">{}</text>\n",
        x, y, kNodeWidth, kNodeHeight,
        group_colour(group == group_of.end() ? -1 : group->second),
        escape_html(node->describe()), x + 6, y + 17,
        escape_html(short_text(node->op + " %" + node->output(0)->name(), 24)));
  }
  return svg + "</svg>\n";
}

std::string bars_svg(const std::vector<Bar>& bars, const std::string& unit) {
  constexpr int kLabel = 260;
  constexpr int kLength = 420;
  constexpr int kBar = 20;
  double largest = 0;
  for (const Bar& bar : bars) largest = std::max(largest, bar.value);
  std::string svg = svg_open(kLabel + kLength + 220, kMargin * 2 + kBar * int(bars.size()));
  for (size_t i = 0; i < bars.size(); ++i) {
    const Bar& bar = bars[i];
    int y = kMargin + static_cast<int>(i) * kBar;
    double length = largest > 0 ? bar.value / largest * kLength : 0;
    svg += fmt::format(
        "<text x=\"{}\" y=\"{}\">{}</text>\n<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" "
        "height=\"{}\" fill=\"{}\"/>\n<text x=\"{:.1f}\" y=\"{}\">{:.4g} {} {}</text>\n",
        kMargin, y + 14, escape_html(short_text(bar.label, 38)), kLabel, y + 3,
        std::max(length, 1.0), kBar - 6, bar.note == "reference" ? "#d62728" : "#1f77b4",
        kLabel + length + 6, y + 14, bar.value, escape_html(unit), escape_html(bar.note));
  }
  return svg + "</svg>\n";
}

std::string lifetimes_svg(const std::vector<Lifetime>& buffers, int steps, int64_t arena_bytes) {
  constexpr int kWidth = 760;
  constexpr int kHeight = 320;
  constexpr int kAxis = 50;
  std::string svg = svg_open(kWidth + kAxis + kMargin * 2, kHeight + kAxis + kMargin);
  double x_scale = static_cast<double>(kWidth) / std::max(steps, 1);
  double y_scale = static_cast<double>(kHeight) / static_cast<double>(std::max<int64_t>(arena_bytes, 1));
  svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" "
                     "stroke=\"#333\"/>\n",
                     kAxis, kMargin, kWidth, kHeight);
  for (size_t i = 0; i < buffers.size(); ++i) {
    const Lifetime& b = buffers[i];
    svg += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\" "
        "stroke=\"#333\" stroke-width=\"0.5\"><title>%{}: {} bytes at offset {}, steps {} to "
        "{}</title></rect>\n",
        kAxis + b.first_step * x_scale, kMargin + static_cast<double>(b.offset) * y_scale,
        (b.last_step - b.first_step + 1) * x_scale,
        std::max(static_cast<double>(b.bytes) * y_scale, 1.0), group_colour(static_cast<int>(i)),
        escape_html(b.name), b.bytes, b.offset, b.first_step, b.last_step);
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\">step 0 .. {} →</text>\n", kAxis,
                     kMargin + kHeight + 18, std::max(steps - 1, 0));
  svg += fmt::format("<text x=\"4\" y=\"{}\">offset</text><text x=\"4\" y=\"{}\">{} B</text>\n",
                     kMargin + 12, kMargin + kHeight, arena_bytes);
  return svg + "</svg>\n";
}

std::string curves_svg(const std::vector<Series>& series, const std::string& x_label,
                       const std::string& y_label) {
  constexpr int kWidth = 640;
  constexpr int kHeight = 280;
  constexpr int kAxis = 50;
  double x_max = 1;
  double y_min = std::numeric_limits<double>::infinity();
  double y_max = -y_min;
  for (const Series& s : series) {
    for (auto [x, y] : s.points) {
      x_max = std::max(x_max, x);
      y_min = std::min(y_min, y);
      y_max = std::max(y_max, y);
    }
  }
  if (!(y_min < y_max)) {  // no points, or all at one height: a band around it
    double middle = std::isfinite(y_min) ? y_min : 0;
    y_min = middle - 1;
    y_max = middle + 1;
  }
  auto px = [&](double x) { return kAxis + x / x_max * kWidth; };
  auto py = [&](double y) { return kMargin + kHeight - (y - y_min) / (y_max - y_min) * kHeight; };
  std::string svg = svg_open(kAxis + kWidth + 240, kHeight + kAxis + 2 * kMargin);
  svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" "
                     "stroke=\"#333\"/>\n<text x=\"{}\" y=\"{}\">{} (0 .. {})</text>\n"
                     "<text x=\"{}\" y=\"{}\">{}</text>\n<text x=\"4\" y=\"{}\">{:.3g}</text>"
                     "<text x=\"4\" y=\"{}\">{:.3g}</text>\n",
                     kAxis, kMargin, kWidth, kHeight, kAxis, kMargin + kHeight + 18,
                     escape_html(x_label), x_max, kAxis, kMargin + kHeight + 36,
                     escape_html(y_label), kMargin + 10, y_max, kMargin + kHeight, y_min);
  for (size_t i = 0; i < series.size(); ++i) {
    const char* colour = kLineColours[i % std::size(kLineColours)];
    std::string points;
    for (auto [x, y] : series[i].points) points += fmt::format("{:.1f},{:.1f} ", px(x), py(y));
    svg += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"/>\n"
                       "<text x=\"{}\" y=\"{}\" fill=\"{}\">{}</text>\n",
                       colour, points, kAxis + kWidth + 10, kMargin + 14 + 16 * int(i), colour,
                       escape_html(short_text(series[i].name, 30)));
  }
  return svg + "</svg>\n";
}

}  // namespace minic::cli
