// The drawings of `minic report` (report.cpp), each an inline SVG element. Course module 1.
//
// Plain SVG written as text, no library and no script, so the page is one file that any
// browser opens offline:
//   graph_svg      a graph's nodes in layers (a node one column right of the latest of
//                  its producers), edges from producer to consumer, each node filled with
//                  its fusion group's colour;
//   bars_svg       one horizontal bar per row, with a label and a value (the profile);
//   lifetimes_svg  the memory plan: a rectangle per buffer, from its first to its last step
//                  across, from its offset to its end in the arena down;
//   curves_svg     one line per series of (x, y) points (the tuning curves), the y axis
//                  from the smallest y to the largest.
//
// Chapter: docs/module1-overview.md#the-driver-and-the-minic-tool
#pragma once

#include "minic/ir/graph/graph.h"

#include <map>
#include <string>
#include <vector>

namespace minic::cli {

// `text` with &, <, > and " escaped for HTML and SVG.
std::string escape_html(const std::string& text);

// The fill of fusion group `group` (0, 1, ...), a light colour; white for -1 (no group).
std::string group_colour(int group);

// `graph` drawn; `group_of` gives a node's fusion group by its first output's name (a
// node not in it is white).
std::string graph_svg(const Graph& graph, const std::map<std::string, int>& group_of);

struct Bar {
  std::string label;
  double value = 0;
  std::string note;  // shown after the value ("compiled", "reference")
};
std::string bars_svg(const std::vector<Bar>& bars, const std::string& unit);

struct Lifetime {
  std::string name;
  int first_step = 0;
  int last_step = 0;
  int64_t offset = 0;
  int64_t bytes = 0;
};
std::string lifetimes_svg(const std::vector<Lifetime>& buffers, int steps, int64_t arena_bytes);

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y), x increasing
};
std::string curves_svg(const std::vector<Series>& series, const std::string& x_label,
                       const std::string& y_label);

}  // namespace minic::cli
