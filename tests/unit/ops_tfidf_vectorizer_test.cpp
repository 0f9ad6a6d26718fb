// Unit tests for TfIdfVectorizer: counting a small pool's n-grams by hand. Course module 2.
#include "ops_test_util.h"

using namespace minic;
using namespace minic::test;

namespace {

// The pool: the unigram [1] (column 0) and the bigram [1, 1] (column 1); X = [1, 2, 1, 2].
Tensor vectorize(const std::string& mode, int64_t max_skip, std::vector<float> weights = {}) {
  Attributes attributes = {{"mode", mode},
                           {"min_gram_length", int64_t{1}},
                           {"max_gram_length", int64_t{2}},
                           {"max_skip_count", max_skip},
                           {"pool_int64s", std::vector<int64_t>{1, 1, 1}},
                           {"ngram_counts", std::vector<int64_t>{0, 1}},
                           {"ngram_indexes", std::vector<int64_t>{0, 1}}};
  if (!weights.empty()) attributes["weights"] = weights;
  OneNode g(9, "TfIdfVectorizer", {}, attributes, {int64s({4}, {1, 2, 1, 2})});
  return g.run({});
}

}  // namespace

TEST_CASE("TfIdfVectorizer counts pool n-grams, with skips", "[ops][tfidf]") {
  // 1 occurs twice. Adjacent pairs are 12, 21, 12: no [1, 1]. With one skip allowed the
  // pairs two apart are (1, 1) and (2, 2): one [1, 1]; the unigrams are not counted again.
  require_values(vectorize("TF", 0), {2}, {2, 0});
  require_values(vectorize("TF", 1), {2}, {2, 1});
  // TFIDF scales the counts by the weights, IDF gives the weight where the count is not 0.
  require_values(vectorize("TFIDF", 1, {0.5f, 3}), {2}, {1, 3});
  require_values(vectorize("IDF", 0, {0.5f, 3}), {2}, {0.5, 0});
}

TEST_CASE("TfIdfVectorizer refuses a bad mode and a pool that does not split", "[ops][tfidf]") {
  OneNode mode(9, "TfIdfVectorizer", {{DType::i64, {4}}},
               {{"mode", std::string("BM25")},
                {"min_gram_length", int64_t{1}},
                {"max_gram_length", int64_t{1}},
                {"max_skip_count", int64_t{0}},
                {"pool_int64s", std::vector<int64_t>{1}},
                {"ngram_counts", std::vector<int64_t>{0}},
                {"ngram_indexes", std::vector<int64_t>{0}}});
  REQUIRE_THROWS_WITH(mode.infer(), Catch::Contains("mode must be TF, IDF or TFIDF"));
  OneNode pool(9, "TfIdfVectorizer", {{DType::i64, {4}}},
               {{"mode", std::string("TF")},
                {"min_gram_length", int64_t{1}},
                {"max_gram_length", int64_t{2}},
                {"max_skip_count", int64_t{0}},
                {"pool_int64s", std::vector<int64_t>{1, 2, 3, 4}},
                {"ngram_counts", std::vector<int64_t>{0, 1}},
                {"ngram_indexes", std::vector<int64_t>{0, 1}}});
  REQUIRE_THROWS_WITH(pool.infer(), Catch::Contains("does not split pool_int64s"));
}
