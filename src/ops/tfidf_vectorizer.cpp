// TfIdfVectorizer: counts the n-grams of a pool in each row of token ids, the feature
// extraction of classic text classifiers. Course module 2.
//
// The pool (pool_int64s) holds n-grams grouped by length: ngram_counts[i] is where the
// grams of length i+1 start. Gram k of the pool (counted across the groups, in order)
// goes to output column ngram_indexes[k]. For each row of X ([C] or [B, C] integers), the
// kernel counts every occurrence of a pool gram whose length lies in
// [min_gram_length, max_gram_length], its items taken `s` apart for every s from 1 to
// max_skip_count + 1 (a gram of length 1 is counted once, not once per s). Then
//   TF: the count      IDF: weights[j] (or 1) where the count is not 0      TFIDF: weights[j] *
//   count
// where j is the column; without weights TFIDF is the count. Output: f32 [B, columns] or
// [columns], columns = max(ngram_indexes) + 1. Strings (pool_strings) are outside minic's
// element types.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include <algorithm>
#include <map>

#include "minic/ops/op.h"

namespace minic {

namespace {

struct TfIdfForm {
  std::string mode;
  int64_t min_length = 0, max_length = 0, max_skip = 0, columns = 0;
  std::map<std::vector<int64_t>, int64_t> column_of;  // pool gram -> output column
  std::vector<float> weights;

  static TfIdfForm read(const NodeContext& ctx) {
    TfIdfForm f;
    f.mode = ctx.get_string("mode", "");
    if (f.mode != "TF" && f.mode != "IDF" && f.mode != "TFIDF") {
      ctx.fail("mode must be TF, IDF or TFIDF, not '{}'", f.mode);
    }
    if (ctx.has_attr("pool_strings")) {
      ctx.fail("pool_strings: minic has no string element type; it supports pool_int64s");
    }
    f.min_length = ctx.get_int("min_gram_length");
    f.max_length = ctx.get_int("max_gram_length");
    f.max_skip = ctx.get_int("max_skip_count");
    if (f.min_length < 1 || f.max_length < f.min_length || f.max_skip < 0) {
      ctx.fail(
          "needs 1 <= min_gram_length ({}) <= max_gram_length ({}) and max_skip_count "
          "({}) >= 0",
          f.min_length, f.max_length, f.max_skip);
    }
    const std::vector<int64_t> pool = ctx.get_ints("pool_int64s");
    const std::vector<int64_t> counts = ctx.get_ints("ngram_counts");
    const std::vector<int64_t> indexes = ctx.get_ints("ngram_indexes");
    f.weights = ctx.get_floats("weights", {});
    if (indexes.empty()) ctx.fail("ngram_indexes is empty");
    f.columns = *std::max_element(indexes.begin(), indexes.end()) + 1;
    if (*std::min_element(indexes.begin(), indexes.end()) < 0) {
      ctx.fail("ngram_indexes must not be negative");
    }
    if (!f.weights.empty() && static_cast<int64_t>(f.weights.size()) < f.columns) {
      ctx.fail("weights has {} values for {} output columns", f.weights.size(), f.columns);
    }
    size_t gram = 0;  // index into ngram_indexes
    for (size_t i = 0; i < counts.size(); ++i) {
      const int64_t length = static_cast<int64_t>(i) + 1;
      const int64_t begin = counts[i];
      const int64_t end = i + 1 < counts.size() ? counts[i + 1] : static_cast<int64_t>(pool.size());
      if (begin < 0 || end < begin || end > static_cast<int64_t>(pool.size()) ||
          (end - begin) % length != 0) {
        ctx.fail(
            "ngram_counts does not split pool_int64s ({} values) into grams of lengths "
            "1, 2, ...",
            pool.size());
      }
      for (int64_t at = begin; at < end; at += length, ++gram) {
        if (gram >= indexes.size())
          ctx.fail("ngram_indexes has fewer entries than the pool has grams");
        if (length < f.min_length || length > f.max_length) continue;
        f.column_of[std::vector<int64_t>(pool.begin() + at, pool.begin() + at + length)] =
            indexes[gram];
      }
    }
    return f;
  }
};

void check_input(const NodeContext& ctx, const TensorType& x) {
  if (x.rank() != 1 && x.rank() != 2) ctx.fail("X must be [C] or [B, C], not {}", type_string(x));
  if (x.dtype != DType::i32 && x.dtype != DType::i64) {
    ctx.fail("X must hold i32 or i64 token ids, not {}", dtype_name(x.dtype));
  }
}

std::vector<TensorType> tfidf_shape(const ShapeContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  check_input(ctx, x);
  TfIdfForm f = TfIdfForm::read(ctx);
  if (x.rank() == 1) return {{DType::f32, {f.columns}}};
  return {{DType::f32, {x.shape[0], f.columns}}};
}

std::vector<Tensor> tfidf_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  check_input(ctx, x.type());
  TfIdfForm f = TfIdfForm::read(ctx);
  const std::vector<int64_t> tokens = x.to_int64_vector();
  const int64_t row_length = x.shape().back();
  const int64_t rows = x.rank() == 1 ? 1 : x.shape()[0];
  std::vector<int64_t> counts(rows * f.columns, 0);
  for (int64_t row = 0; row < rows; ++row) {
    const int64_t* items = tokens.data() + row * row_length;
    for (int64_t skip = 1; skip <= f.max_skip + 1; ++skip) {
      // Grams of length 1 are the same whatever the skip: count them with the first only.
      const int64_t shortest = skip == 1 ? f.min_length : std::max<int64_t>(f.min_length, 2);
      for (int64_t start = 0; start < row_length; ++start) {
        std::vector<int64_t> gram;
        for (int64_t at = start;
             at < row_length && static_cast<int64_t>(gram.size()) < f.max_length; at += skip) {
          gram.push_back(items[at]);
          if (static_cast<int64_t>(gram.size()) < shortest) continue;
          auto it = f.column_of.find(gram);
          if (it != f.column_of.end()) ++counts[row * f.columns + it->second];
        }
      }
    }
  }
  std::vector<float> y(counts.size());
  for (size_t i = 0; i < counts.size(); ++i) {
    const int64_t column = static_cast<int64_t>(i) % f.columns;
    const float weight = f.weights.empty() ? 1.0f : f.weights[column];
    const float count = static_cast<float>(counts[i]);
    if (f.mode == "TF") y[i] = count;
    if (f.mode == "IDF") y[i] = counts[i] > 0 ? weight : 0.0f;
    if (f.mode == "TFIDF") y[i] = weight * count;
  }
  return single_output(Tensor::from_vector<float>(ctx.output_type(0).shape, y));
}

}  // namespace

void register_tfidf_vectorizer_ops(OpRegistry& registry) {
  registry.add({.name = "TfIdfVectorizer",
                .min_opset = 9,
                .shape_rule = tfidf_shape,
                .kernel = tfidf_kernel});
}

}  // namespace minic
