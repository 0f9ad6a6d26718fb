// Features of a scheduled kernel (features.h). Course module 5.
//
// The kernel is read after the loop pipeline: blocks are gone, buffers are flat, unrolled
// loops are copies of their body, vectorised loops are vector expressions (ramp,
// broadcast). One walk (KernelWalker) visits every statement with the stack of loops
// around it and sums, for each store, its work times the iterations of those loops. The
// store that does the most work -- a GEMM's update -- and the stores of the same loop body
// (the other rows of an unrolled register tile) are the "main body", looked at closely:
// the loops around it, and the memory its accesses touch while the innermost one, two,
// ... of those loops run, by interval bounds (loop::bound_of) of each index
// (feature_memory.cpp).
//
// The features are one table (named_features): a name and a value each, in a fixed
// order, so the names and the vector cannot disagree.
//
// Chapter: docs/module5-autotuning.md#3-features
#include "minic/autotune/features.h"

#include "feature_memory.h"

#include "minic/ir/loop/analysis.h"
#include "minic/ir/loop/visitor.h"
#include "minic/passes/pass_manager.h"
#include "minic/support/error.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>

namespace minic::autotune {
namespace {

// How many levels of the main body's loop nest have a footprint feature.
constexpr size_t kFootprintLevels = 8;

// What evaluating expressions costs: float and index arithmetic (each op once per lane),
// math calls, loaded elements, and the widest vector met.
struct Work {
  double float_ops = 0;
  double vector_float_ops = 0;
  double int_ops = 0;
  double calls = 0;
  double loaded = 0;
  double vector_loaded = 0;
  int widest = 1;

  // Adds `other`, done `times` times.
  void add(const Work& other, double times) {
    float_ops += other.float_ops * times;
    vector_float_ops += other.vector_float_ops * times;
    int_ops += other.int_ops * times;
    calls += other.calls * times;
    loaded += other.loaded * times;
    vector_loaded += other.vector_loaded * times;
    widest = std::max(widest, other.widest);
  }
};

// Counts the Work of expressions, per execution; remembers every load.
class ExprCounter : public loop::IRVisitor, public Work {
 public:
  std::vector<const loop::Load*> loads;

#define MINIC_COUNT_OP(Node)                            \
  void visit_##Node(const loop::Node* node) override {  \
    count(node->type);                                  \
    loop::IRVisitor::visit_##Node(node);                \
  }
  MINIC_COUNT_OP(Add)
  MINIC_COUNT_OP(Sub)
  MINIC_COUNT_OP(Mul)
  MINIC_COUNT_OP(Div)
  MINIC_COUNT_OP(Mod)
  MINIC_COUNT_OP(FloorDiv)
  MINIC_COUNT_OP(FloorMod)
  MINIC_COUNT_OP(Min)
  MINIC_COUNT_OP(Max)
#undef MINIC_COUNT_OP

  void visit_Call(const loop::Call* node) override {
    calls += node->type.lanes;
    count(node->type);
    loop::IRVisitor::visit_Call(node);
  }
  void visit_Load(const loop::Load* node) override {
    loaded += node->type.lanes;
    if (node->type.is_vector()) vector_loaded += node->type.lanes;
    widest = std::max(widest, node->type.lanes);
    loads.push_back(node);
    loop::IRVisitor::visit_Load(node);
  }

 private:
  void count(loop::DataType type) {
    widest = std::max(widest, type.lanes);
    if (!is_float(type.dtype)) {
      int_ops += type.lanes;
      return;
    }
    float_ops += type.lanes;
    if (type.is_vector()) vector_float_ops += type.lanes;
  }
};

// One store, where it is and what one execution of it costs.
struct StoreInfo {
  const loop::Store* store = nullptr;
  std::vector<LoopInfo> loops;  // around it, outermost first
  double iterations = 1;        // of those loops together
  double float_ops = 0;         // per execution
  std::vector<const loop::Load*> loads;
  size_t innermost_loop = 0;    // which For (in visiting order, + 1; 0: none) holds it
  bool conditional = false;     // under an `if` inside that loop (a reduction's init)
};

// The totals of the whole kernel, and every store.
class KernelWalker : public loop::IRVisitor, public Work {
 public:
  double stored = 0;
  double branches = 0;
  double loops = 0;
  double parallel_loops = 0;
  double alloc_bytes = 0;
  double local_alloc_bytes = 0;
  double allocations = 0;
  std::vector<StoreInfo> stores;
  std::vector<double> stores_directly_in;  // by For (visiting order, + 1)

  void visit_For(const loop::For* node) override {
    ++loops;
    if (node->for_kind == loop::ForKind::parallel) ++parallel_loops;
    LoopInfo info;
    info.var = node->var.as<loop::Var>();
    info.min = loop::as_const_int(node->min).value_or(0);
    info.extent = std::max<int64_t>(loop::as_const_int(node->extent).value_or(1), 1);
    info.kind = node->for_kind;
    stack_.push_back(info);
    stores_directly_in.push_back(0);
    size_t saved_loop = current_loop_;
    int saved_branches = branches_in_loop_;
    current_loop_ = stores_directly_in.size();
    branches_in_loop_ = 0;
    visit(node->body);
    current_loop_ = saved_loop;
    branches_in_loop_ = saved_branches;
    stack_.pop_back();
  }

  void visit_Store(const loop::Store* node) override {
    ExprCounter counter;
    counter.visit(node->value);
    for (const loop::Expr& index : node->indices) counter.visit(index);
    double iterations = 1;
    for (const LoopInfo& info : stack_) iterations *= static_cast<double>(info.extent);
    int lanes = node->value.type().lanes;
    add(counter, iterations);
    stored += lanes * iterations;
    widest = std::max(widest, lanes);
    if (current_loop_ > 0) ++stores_directly_in[current_loop_ - 1];
    stores.push_back({node, stack_, iterations, counter.float_ops, counter.loads, current_loop_,
                      branches_in_loop_ > 0});
  }

  void visit_IfThenElse(const loop::IfThenElse* node) override {
    double iterations = 1;
    for (const LoopInfo& info : stack_) iterations *= static_cast<double>(info.extent);
    branches += iterations;
    ++branches_in_loop_;
    loop::IRVisitor::visit_IfThenElse(node);
    --branches_in_loop_;
  }

  void visit_Allocate(const loop::Allocate* node) override {
    double elements = 1;
    for (int64_t extent : node->buffer->shape) elements *= static_cast<double>(extent);
    double bytes = elements * dtype_size(node->buffer->dtype);
    ++allocations;
    alloc_bytes += bytes;
    if (node->buffer->scope == loop::MemoryScope::local) local_alloc_bytes += bytes;
    loop::IRVisitor::visit_Allocate(node);
  }

 private:
  std::vector<LoopInfo> stack_;
  size_t current_loop_ = 0;
  int branches_in_loop_ = 0;  // ifs entered since the innermost loop
};

std::vector<Access> accesses_of(const std::vector<const StoreInfo*>& body) {
  std::vector<Access> accesses;
  for (const StoreInfo* info : body) {
    accesses.push_back({info->store->buffer, &info->store->indices});
    for (const loop::Load* load : info->loads) accesses.push_back({load->buffer, &load->indices});
  }
  return accesses;
}

// What the features need from a walk.
struct Summary {
  KernelWalker totals;
  double param_bytes = 0;
  // The main body:
  double main_float_ops = 0;  // per call
  double main_iterations = 0;
  double main_lanes = 0;
  double depth = 0;
  double serial_extent = 1;
  double parallel_extent = 1;
  double unrolled_extent = 1;
  double innermost_extent = 0;
  double stores_in_innermost = 0;
  double buffers = 0;
  std::array<double, kFootprintLevels> footprints = {};
  double max_stride = 0;
  double invariant_fraction = 0;  // accesses that stay put in the innermost loop
  double unit_fraction = 0;       // accesses that move one element per iteration or lane
};

// The store that does the most: float operations (plus stored lanes, so a copy kernel
// has work too) times iterations. The first of equals.
const StoreInfo* main_store(const KernelWalker& walker) {
  const StoreInfo* best = nullptr;
  double best_work = -1;
  for (const StoreInfo& info : walker.stores) {
    double lanes = info.store->value.type().lanes;
    double work = (info.float_ops + lanes) * info.iterations;
    if (work > best_work) {
      best = &info;
      best_work = work;
    }
  }
  return best;
}

// The main store and the stores that run with it: those of the same innermost loop body
// (not under an `if` there, unless the main store is) -- every row of an unrolled
// register tile.
std::vector<const StoreInfo*> main_body(const StoreInfo& main, const KernelWalker& walker) {
  if (main.innermost_loop == 0) return {&main};
  std::vector<const StoreInfo*> body;
  for (const StoreInfo& info : walker.stores) {
    if (info.innermost_loop == main.innermost_loop && info.conditional == main.conditional) {
      body.push_back(&info);
    }
  }
  return body;
}

void describe_main_body(const StoreInfo& info, const KernelWalker& walker, Summary& summary) {
  std::vector<const StoreInfo*> body = main_body(info, walker);
  for (const StoreInfo* store : body) summary.main_float_ops += store->float_ops * store->iterations;
  summary.main_iterations = info.iterations;
  summary.main_lanes = info.store->value.type().lanes;
  summary.depth = static_cast<double>(info.loops.size());
  for (const LoopInfo& loop : info.loops) {
    double extent = static_cast<double>(loop.extent);
    if (loop.kind == loop::ForKind::parallel) summary.parallel_extent *= extent;
    else if (loop.kind == loop::ForKind::unrolled) summary.unrolled_extent *= extent;
    else summary.serial_extent *= extent;
  }
  if (info.innermost_loop > 0) {
    summary.stores_in_innermost = walker.stores_directly_in[info.innermost_loop - 1];
  }
  std::vector<Access> accesses = accesses_of(body);
  std::map<std::string, int> buffers;
  for (const Access& access : accesses) ++buffers[access.buffer->name];
  summary.buffers = static_cast<double>(buffers.size());
  for (size_t level = 0; level < kFootprintLevels; ++level) {
    size_t varying = std::min(level + 1, info.loops.size());
    summary.footprints[level] = footprint(accesses, info.loops, varying);
  }
  if (info.loops.empty()) return;
  const LoopInfo& innermost = info.loops.back();
  summary.innermost_extent = static_cast<double>(innermost.extent);
  double invariant = 0;
  double unit = 0;
  for (const Access& access : accesses) {
    std::optional<int64_t> stride = stride_in(access, info.loops, innermost);
    std::optional<IndexParts> last;
    if (!access.indices->empty()) last = index_parts(access.indices->back());
    bool unit_lanes = last && last->lanes > 1 && last->stride == 1;
    if (!stride) continue;
    summary.max_stride = std::max(summary.max_stride, static_cast<double>(std::abs(*stride)));
    if (*stride == 0) ++invariant;
    if (std::abs(*stride) == 1 || unit_lanes) ++unit;
  }
  summary.invariant_fraction = invariant / static_cast<double>(accesses.size());
  summary.unit_fraction = unit / static_cast<double>(accesses.size());
}

float log_scale(double x) { return static_cast<float>(std::log2(1.0 + std::max(0.0, x))); }
float fraction(double part, double whole) {
  return whole > 0 ? static_cast<float>(std::clamp(part / whole, 0.0, 1.0)) : 0.0f;
}

// Every feature: its name and its value, in vector order.
std::vector<std::pair<std::string, float>> named_features(const Summary& s) {
  const KernelWalker& t = s.totals;
  double outermost = s.footprints.back();
  std::vector<std::pair<std::string, float>> features = {
      // work, per call
      {"float_ops", log_scale(t.float_ops)},
      {"vector_float_fraction", fraction(t.vector_float_ops, t.float_ops)},
      {"index_ops", log_scale(t.int_ops)},
      {"math_calls", log_scale(t.calls)},
      {"loaded_elements", log_scale(t.loaded)},
      {"vector_load_fraction", fraction(t.vector_loaded, t.loaded)},
      {"stored_elements", log_scale(t.stored)},
      {"branches", log_scale(t.branches)},
      {"statements", log_scale(static_cast<double>(t.stores.size()))},
      // loops
      {"loops", log_scale(t.loops)},
      {"parallel_loops", log_scale(t.parallel_loops)},
      {"widest_vector", log_scale(t.widest)},
      // the main body and its loops
      {"main_float_fraction", fraction(s.main_float_ops, t.float_ops)},
      {"main_iterations", log_scale(s.main_iterations)},
      {"main_lanes", log_scale(s.main_lanes)},
      {"main_depth", log_scale(s.depth)},
      {"main_serial_extent", log_scale(s.serial_extent)},
      {"main_parallel_extent", log_scale(s.parallel_extent)},
      {"main_unrolled_extent", log_scale(s.unrolled_extent)},
      {"main_innermost_extent", log_scale(s.innermost_extent)},
      {"main_stores_in_innermost", log_scale(s.stores_in_innermost)},
      {"main_work_per_thread", log_scale(s.main_float_ops / s.parallel_extent)},
      // memory of the main body
      {"main_buffers", log_scale(s.buffers)},
      {"main_max_stride", log_scale(s.max_stride)},
      {"main_invariant_fraction", static_cast<float>(s.invariant_fraction)},
      {"main_unit_stride_fraction", static_cast<float>(s.unit_fraction)},
      {"main_intensity", log_scale(outermost > 0 ? s.main_float_ops / outermost : 0)},
  };
  for (size_t level = 0; level < kFootprintLevels; ++level) {
    features.push_back({"footprint_" + std::to_string(level), log_scale(s.footprints[level])});
  }
  // buffers
  features.push_back({"param_bytes", log_scale(s.param_bytes)});
  features.push_back({"alloc_bytes", log_scale(t.alloc_bytes)});
  features.push_back({"local_alloc_bytes", log_scale(t.local_alloc_bytes)});
  features.push_back({"allocations", log_scale(t.allocations)});
  return features;
}

}  // namespace

const std::vector<std::string>& feature_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> result;
    for (const auto& [name, value] : named_features(Summary{})) result.push_back(name);
    return result;
  }();
  return names;
}

std::vector<float> extract_features(const loop::PrimFunc& func) {
  Summary summary;
  summary.totals.visit(func.body);
  for (const loop::Buffer& param : func.params) {
    double elements = 1;
    for (int64_t extent : param->shape) elements *= static_cast<double>(extent);
    summary.param_bytes += elements * dtype_size(param->dtype);
  }
  if (const StoreInfo* main = main_store(summary.totals)) {
    describe_main_body(*main, summary.totals, summary);
  }
  std::vector<float> values;
  for (const auto& [name, value] : named_features(summary)) {
    values.push_back(std::isfinite(value) ? value : 0.0f);
  }
  return values;
}

std::vector<float> features_of_scheduled(const loop::PrimFunc& scheduled) {
  loop::LoopModule module;
  module.functions.push_back(scheduled);
  run_passes(module, loop::default_loop_pipeline());
  return extract_features(module.functions.at(0));
}

}  // namespace minic::autotune
