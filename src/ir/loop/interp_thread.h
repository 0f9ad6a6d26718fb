// Threads of the loop IR interpreter (interpreter.h): internal to src/ir/loop.
//
// Course module 3. A Thread runs statements with an explicit stack of frames instead of
// C++ recursion, so that it can stop at a barrier and resume there later. The host code
// of a function runs as one Thread; when it reaches a threadIdx loop, the threads of
// that GPU thread block are launched, each a Thread of its own, and run phase by phase
// between barriers (run_thread_block in interpreter.cpp). A Thread has its own
// variables and its own local buffers; the other buffers are shared.
//
// Chapter: docs/module3-loop-ir.md#4-the-verifier-and-the-interpreter-the-oracle
#pragma once

#include "interp_value.h"

#include <unordered_map>

namespace minic::loop::interp {

// The variables in scope and their values, innermost last: statements bind and unbind
// variables in stack order, and a nest rarely has more than a dozen, so a vector
// searched from the back is the simplest and fastest map.
using Env = std::vector<std::pair<const Var*, int64_t>>;
using BufferMap = std::unordered_map<const BufferNode*, Storage*>;

// 0, 1, 2 for threadIdx.x, .y, .z; -1 for any other axis.
int thread_idx_dim(const std::string& axis);
// "threadIdx (1, 0, 0)": how messages name the thread of linear id `id` (x fastest).
std::string thread_name(const std::array<int64_t, 3>& extents, int64_t id);

// An Error whose message already says where it happened (block, thread).
class RunError : public Error {
 public:
  using Error::Error;
};

// Records which thread touched which element of a shared buffer since the last barrier,
// and reports a data race: a thread reading an element another thread changed, or
// changing an element another thread read or changed. A write of the value an element
// already holds changes nothing and is not recorded.
class RaceTracker {
 public:
  void clear() { accesses_.clear(); }
  void on_read(const Storage& storage, int64_t offset, int64_t thread);
  void on_change(const Storage& storage, int64_t offset, int64_t thread);
  // How error messages name thread `id` (its threadIdx), set by the thread block.
  std::array<int64_t, 3> extents = {1, 1, 1};

 private:
  struct Key {
    const Storage* storage;
    int64_t offset;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& key) const {
      return std::hash<const void*>()(key.storage) ^ std::hash<int64_t>()(key.offset) * 31;
    }
  };
  struct Access {
    int64_t changer = -1;  // the last thread that changed the element
    int64_t reader = -1;   // a thread that read it
    bool many_readers = false;
  };
  [[noreturn]] void race(const Storage& storage, int64_t offset, const std::string& what) const;
  std::string name(int64_t id) const { return thread_name(extents, id); }

  std::unordered_map<Key, Access, KeyHash> accesses_;
};

// What the threads of one GPU thread block share: their extents, the shared and global
// buffers allocated inside the threadIdx loops (one per block, made by the first thread
// that reaches the allocation), and the race tracker.
struct ThreadBlock {
  std::array<int64_t, 3> extents = {1, 1, 1};  // threadIdx.x, .y, .z
  std::unordered_map<const BufferNode*, std::unique_ptr<Storage>> buffers;
  RaceTracker races;
};

// One statement being run, and how far: the stage of a For, Block, Allocate or
// IfThenElse (0 before it starts), a For's next iteration, a Seq's next statement.
struct Frame {
  const StmtNode* stmt = nullptr;
  int stage = 0;
  int64_t next = 0;
  int64_t end = 0;
  size_t binding = 0;  // a For's variable in the Env
  std::vector<std::unique_ptr<Storage>> owned;  // allocations that end with this frame
  std::vector<const BufferNode*> allocated;     // buffers this frame put in scope
};

class Thread {
 public:
  // The host thread, with the parameters in scope.
  explicit Thread(BufferMap buffers) : buffers_(std::move(buffers)) {}
  // Thread `id` (linear: x fastest) of a GPU thread block, with the host's variables and
  // its shared buffers in scope.
  Thread(ThreadBlock* block, int64_t id, const Thread& host);

  // Puts `stmt` on the stack; run() runs it.
  void start(const StmtNode* stmt) { push(stmt); }
  // Runs until the stack is empty (returns null) or a barrier (returns it, popped, so the
  // next run() continues after it).
  const Evaluate* run();

  // Used by expression evaluation (interp_eval.cpp).
  int64_t var(const Var* var) const;
  Storage& storage(const Buffer& buffer) const;
  Scalar read(Storage& storage, int64_t offset);
  void write(Storage& storage, int64_t offset, Scalar value);

 private:
  void push(const StmtNode* stmt) {
    stack_.emplace_back();
    stack_.back().stmt = stmt;
  }
  void pop();
  void step_for(Frame& frame, const For* loop);
  void step_block(Frame& frame, const Block* block);
  void step_store(const Store* store);
  void allocate(Frame& frame, const Buffer& buffer);

  ThreadBlock* block_ = nullptr;  // null for the host
  int64_t id_ = 0;
  std::array<int64_t, 3> index_ = {0, 0, 0};  // threadIdx.x, .y, .z
  Env env_;
  BufferMap buffers_;
  std::vector<Frame> stack_;
};

// Runs the GPU thread block that the threadIdx loop `loop` starts, for the host thread
// that reached it (interpreter.cpp).
void run_thread_block(const For* loop, Thread& host);

// --- expressions (interp_eval.cpp) ----------------------------------------------------------

Value eval(Thread& thread, const Expr& expr);
// A scalar i64 or bool expression.
int64_t eval_scalar(Thread& thread, const Expr& expr);
// The element offset of each lane of buffer[indices] in its storage: checks every index
// against the buffer's shape and throws Error naming the buffer and the index if one is
// outside (`access` is "load from" or "store to").
Value element_offsets(Thread& thread, const Storage& storage, const std::vector<Expr>& indices,
                      int lanes, const char* access);

}  // namespace minic::loop::interp
