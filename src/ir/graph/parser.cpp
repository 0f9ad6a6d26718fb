// The graph parser: the .mgraph text form → Graph (syntax in include/minic/ir/graph/text.h).
//
// Course module 2. A recursive-descent parser over the tokens of lexer.cpp, one function
// per construct of the grammar:
//
//   file       := graph resources?
//   graph      := 'graph' NAME '(' params ')' '->' '(' params ')' ('opset' INT)?
//                 '{' statement* 'return' values '}'
//   params     := (VALUE ':' (type | '?'))*    separated by ','
//   statement  := VALUE '=' 'const' type data
//               | (VALUE (',' VALUE)* '=')? OP '(' inputs ')' attributes? (':' types)? NODENAME?
//               | (VALUE (',' VALUE)* '=')? 'fused' '(' inputs ')' attributes? (':' types)?
//                 NODENAME? '{' statement* '}'
//   attribute  := NAME '=' (INT | FLOAT | STRING | list | 'tensor' '<' type data '>'
//                           | 'graph' NAME '(' params ')' '->' '(' params ')'
//                             '{' statement* 'return' values '}')
//   resources  := 'resources' '{' (NAME ':' STRING)* '}'
//
// The graph is built while reading, through Graph::add_input / add_constant / add_node /
// add_output, so a value must be defined before it is used: the text is in topological
// order. Node output types are set as written; no shape inference runs. A `resource<name>`
// is filled in at the end, once the `resources` section has been read.
//
// A fused node's body is a scope of its own: reading it, the parser switches to a new
// Graph whose inputs are named and typed like the node's inputs, reads the statements up
// to the closing brace into it, and makes the body values named like the node's outputs
// the body's outputs. Inside, a name means the body's value; outside, the graph's. A graph
// attribute (a control-flow body) is a scope of its own too, read like the top-level graph
// but with untyped (`?`) inputs allowed; it sees only its own values.
//
// Chapter: docs/module2-graph-ir.md#the-text-form
#include "minic/ir/graph/text.h"

#include "lexer.h"
#include "literals.h"
#include "text_syntax.h"

#include <charconv>
#include <map>

namespace minic {

namespace {

using graph_text::describe;
using graph_text::read_type;
using graph_text::TensorLiteral;
using graph_text::Token;
using graph_text::TokenCursor;
using graph_text::TokenKind;

// Bodies (fused nodes' and graph attributes) nest by recursion, here and in everything
// that walks them: deeper input is an error rather than a stack overflow (a real graph
// nests a few levels).
constexpr int kMaxBodyDepth = 100;

// A `%name: type` of the signature; `type` is empty for `?`.
struct Parameter {
  Token token;
  std::optional<TensorType> type;
};

// A constant or tensor attribute whose bytes are in the `resources` section.
struct PendingResource {
  TensorLiteral literal;
  Value* value = nullptr;  // the constant, or
  Node* node = nullptr;    // the node and attribute holding it
  std::string attribute;
};

// Where statements go: the graph they are read into (the top-level graph, a fused node's
// body or a graph attribute), the tokens that defined its values (for "already defined at
// line N"), and what ends its statements, for messages.
struct Scope {
  Graph* graph = nullptr;
  std::map<std::string, Token> defined;
  std::string_view end = "'return'";
};

class Parser {
 public:
  Parser(const std::string& text, const std::string& source)
      : in_(graph_text::tokenize(text, source), source) {
    top_.graph = &graph_;
    scope_ = &top_;
  }

  Graph parse() {
    in_.expect_keyword("graph");
    graph_.name = read_name("a graph name");
    in_.expect_punct("(");
    for (const Parameter& input : read_parameters()) {
      if (!input.type) in_.error_at(input.token, "a graph input needs a type, not '?'");
      define(input.token);
      graph_.add_input(input.token.text, *input.type);
    }
    in_.expect_punct("->");
    in_.expect_punct("(");
    std::vector<Parameter> outputs = read_parameters();
    if (in_.accept_keyword("opset")) graph_.opset = read_opset();
    in_.expect_punct("{");
    while (!in_.peek().is_keyword("return")) read_statement();
    read_return(outputs);
    in_.expect_punct("}");
    std::map<std::string, Token> resources;
    if (in_.accept_keyword("resources")) resources = read_resources();
    if (in_.peek().kind != TokenKind::kEnd) in_.expected("'resources' or the end of input");
    fill_resources(resources);
    return std::move(graph_);
  }

 private:
  std::string read_name(std::string_view what) {
    if (in_.peek().kind == TokenKind::kIdentifier || in_.peek().kind == TokenKind::kString) {
      return in_.take().text;
    }
    in_.expected(what);
  }

  // Parameters up to and including the closing ')'.
  std::vector<Parameter> read_parameters() {
    std::vector<Parameter> parameters;
    if (in_.accept_punct(")")) return parameters;
    do {
      Parameter parameter{in_.expect(TokenKind::kValue, "a value such as %x"), std::nullopt};
      in_.expect_punct(":");
      parameter.type = read_type_or_unknown();
      parameters.push_back(std::move(parameter));
    } while (in_.accept_punct(","));
    in_.expect_punct(")");
    return parameters;
  }

  std::optional<TensorType> read_type_or_unknown() {
    if (in_.accept_punct("?")) return std::nullopt;
    return read_type(in_);
  }

  int read_opset() {
    Token token = in_.expect(TokenKind::kInteger, "an opset version");
    int value = 0;
    auto [ptr, ec] = std::from_chars(token.text.data(), token.text.data() + token.text.size(),
                                     value);
    if (ec != std::errc() || ptr != token.text.data() + token.text.size() || value < 0) {
      in_.error_at(token, fmt::format("opset {} is not a version number", token.text));
    }
    return value;
  }

  // Records that the value named by `token` is defined here; a second definition fails.
  void define(const Token& token) {
    auto [it, inserted] = scope_->defined.emplace(token.text, token);
    if (!inserted) {
      in_.error_at(token, fmt::format("{} is already defined at line {}",
                                      describe(token), it->second.line));
    }
  }

  Value* lookup(const Token& token) {
    Value* value = scope_->graph->find_value(token.text);
    if (!value) {
      in_.error_at(token, fmt::format("unknown value {} (values must be defined before they "
                                      "are used)", describe(token)));
    }
    return value;
  }

  void read_statement() {
    std::vector<Token> outputs;
    if (in_.peek().kind == TokenKind::kValue) {
      do {
        outputs.push_back(in_.expect(TokenKind::kValue, "a value such as %x"));
      } while (in_.accept_punct(","));
      in_.expect_punct("=");
      if (in_.peek().is_keyword("const")) return read_constant(outputs);
    } else if (in_.peek().kind != TokenKind::kIdentifier &&
               in_.peek().kind != TokenKind::kString) {
      in_.expected(fmt::format("a statement or {}", scope_->end));
    }
    if (in_.peek().is_keyword(graph_text::kFusedKeyword)) return read_fused_node(outputs);
    read_node(outputs);
  }

  void read_constant(const std::vector<Token>& outputs) {
    Token keyword = in_.expect_keyword("const");
    if (outputs.size() != 1) in_.error_at(keyword, "a constant defines exactly one value");
    TensorType type = read_type(in_);
    TensorLiteral literal = graph_text::read_tensor_data(in_, type);
    define(outputs[0]);
    if (!literal.resource) {
      scope_->graph->add_constant(outputs[0].text, std::move(literal.data));
      return;
    }
    Value* value = scope_->graph->add_constant(outputs[0].text, Tensor());
    value->type = type;
    pending_.push_back({std::move(literal), value, nullptr, ""});
  }

  // What follows the op name of a node: `(inputs) {attributes} : types @name`.
  struct NodeTail {
    std::vector<Token> input_tokens;  // kValue tokens, or `_` for an omitted input
    std::vector<Value*> inputs;
    Attributes attributes;
    std::vector<std::pair<std::string, TensorLiteral>> attribute_resources;
    std::vector<std::optional<TensorType>> types;
    std::string node_name;
  };

  // `fused` is true after `fused`, where a `{` may open the body rather than attributes.
  NodeTail read_node_tail(size_t num_outputs, bool fused) {
    NodeTail tail;
    in_.expect_punct("(");
    if (!in_.peek().is_punct(")")) {
      do {
        if (in_.peek().is_keyword("_")) {
          tail.input_tokens.push_back(in_.take());
          tail.inputs.push_back(nullptr);
        } else {
          Token token = in_.expect(TokenKind::kValue, "an input such as %x or _");
          tail.inputs.push_back(lookup(token));
          tail.input_tokens.push_back(std::move(token));
        }
      } while (in_.accept_punct(","));
    }
    in_.expect_punct(")");
    // `{` opens the attributes when a name and `=` follow it (or, after an op, `}`); after
    // `fused(...)` it may open the body instead, whose statements start otherwise.
    const Token& next = in_.peek(1);
    bool name_follows = next.kind == TokenKind::kIdentifier || next.kind == TokenKind::kString;
    bool attributes_follow =
        in_.peek().is_punct("{") &&
        ((name_follows && in_.peek(2).is_punct("=")) || (!fused && next.is_punct("}")));
    if (attributes_follow) {
      in_.take();
      tail.attributes = read_attributes(tail.attribute_resources);
    }
    tail.types.resize(num_outputs);
    if (in_.peek().is_punct(":")) {
      Token colon = in_.take();
      tail.types.clear();
      do {
        tail.types.push_back(read_type_or_unknown());
      } while (in_.accept_punct(","));
      if (tail.types.size() != num_outputs) {
        in_.error_at(colon, fmt::format("{} output types for {} outputs", tail.types.size(),
                                        num_outputs));
      }
    }
    if (in_.peek().kind == TokenKind::kNodeName) tail.node_name = in_.take().text;
    return tail;
  }

  // Gives the node's outputs the types written, and records its attributes' resources.
  void finish_node(Node* node, NodeTail& tail) {
    for (size_t i = 0; i < tail.types.size(); ++i) {
      if (!tail.types[i]) continue;
      node->output(i)->type = *tail.types[i];
      node->output(i)->has_type = true;
    }
    for (auto& [name, literal] : tail.attribute_resources) {
      pending_.push_back({std::move(literal), nullptr, node, name});
    }
  }

  static std::vector<std::string> names_of(const std::vector<Token>& tokens) {
    std::vector<std::string> names;
    for (const Token& token : tokens) names.push_back(token.text);
    return names;
  }

  void read_node(const std::vector<Token>& outputs) {
    std::string op = read_name("an op name such as Conv");
    NodeTail tail = read_node_tail(outputs.size(), false);
    for (const Token& output : outputs) define(output);
    Node* node = scope_->graph->add_node(op, std::move(tail.inputs), names_of(outputs),
                                         std::move(tail.attributes), tail.node_name);
    finish_node(node, tail);
  }

  // `%y = fused(%x, %w) : f32[8] @name { statements }`: the body is read into a Graph of
  // its own (see the file comment), which then becomes the node's body.
  void read_fused_node(const std::vector<Token>& outputs) {
    in_.expect_keyword(graph_text::kFusedKeyword);
    NodeTail tail = read_node_tail(outputs.size(), true);
    auto body = std::make_unique<Graph>();
    body->name = tail.node_name.empty() ? std::string(graph_text::kFusedKeyword)
                                        : tail.node_name;
    body->opset = scope_->graph->opset;
    Scope scope{body.get(), {}, "'}'"};
    for (size_t i = 0; i < tail.inputs.size(); ++i) {
      const Token& token = tail.input_tokens[i];
      if (!tail.inputs[i]) in_.error_at(token, "a fused node cannot omit an input");
      if (!scope.defined.emplace(token.text, token).second) {
        in_.error_at(token, fmt::format("{} is given twice; a fused node's inputs are "
                                        "distinct values", describe(token)));
      }
      Value* input = body->add_input(token.text, tail.inputs[i]->type);
      input->has_type = tail.inputs[i]->has_type;
    }
    in_.expect_punct("{");
    enter_body();
    Scope* outer = scope_;
    scope_ = &scope;
    while (!in_.accept_punct("}")) {
      if (in_.peek().is_keyword("return")) {
        in_.error_at(in_.peek(), "a fused node's body has no 'return': its outputs are the "
                                 "values named like the node's outputs");
      }
      read_statement();
    }
    --body_depth_;
    scope_ = outer;
    for (size_t i = 0; i < outputs.size(); ++i) {
      Value* output = body->find_value(outputs[i].text);
      if (!output) {
        in_.error_at(outputs[i], fmt::format("the body of this fused node does not define {}",
                                             describe(outputs[i])));
      }
      if (tail.types[i] && output->has_type && *tail.types[i] != output->type) {
        in_.error_at(outputs[i], fmt::format("{} is {} here but {} in the body",
                                             describe(outputs[i]), type_string(*tail.types[i]),
                                             type_string(output->type)));
      }
      body->add_output(output);
    }
    for (const Token& output : outputs) define(output);
    Node* node = scope_->graph->add_fused_node(std::move(body), std::move(tail.inputs),
                                               names_of(outputs), tail.node_name);
    node->attributes = std::move(tail.attributes);
    finish_node(node, tail);
  }

  // Attributes after the '{', through the '}'.
  Attributes read_attributes(std::vector<std::pair<std::string, TensorLiteral>>& resources) {
    Attributes attributes;
    if (in_.accept_punct("}")) return attributes;
    do {
      Token name_token = in_.peek();
      std::string name = read_name("an attribute name");
      in_.expect_punct("=");
      std::optional<TensorLiteral> resource;
      AttributeValue value = in_.peek().is_keyword("graph")
                                 ? AttributeValue(read_graph_attribute())
                                 : graph_text::read_attribute_value(in_, resource);
      if (!attributes.emplace(name, std::move(value)).second) {
        in_.error_at(name_token, fmt::format("attribute '{}' is given twice", name));
      }
      if (resource) resources.emplace_back(name, std::move(*resource));
    } while (in_.accept_punct(","));
    in_.expect_punct("}");
    return attributes;
  }

  void enter_body() {
    if (++body_depth_ > kMaxBodyDepth) {
      in_.error_at(in_.peek(), fmt::format("bodies nested more than {} deep", kMaxBodyDepth));
    }
  }

  // `graph name(%i: ?) -> (%o: ?) { statements return %o }`: a control-flow body, read into
  // a Graph of its own; its values are typed only where the text gives types.
  GraphAttribute read_graph_attribute() {
    in_.expect_keyword("graph");
    auto body = std::make_shared<Graph>();
    body->name = read_name("a graph name");
    body->opset = scope_->graph->opset;
    Scope scope{body.get(), {}, "'return'"};
    Scope* outer = scope_;
    scope_ = &scope;
    in_.expect_punct("(");
    for (const Parameter& input : read_parameters()) {
      define(input.token);
      Value* value = body->add_input(input.token.text, input.type.value_or(TensorType{}));
      value->has_type = input.type.has_value();
    }
    in_.expect_punct("->");
    in_.expect_punct("(");
    std::vector<Parameter> outputs = read_parameters();
    in_.expect_punct("{");
    enter_body();
    while (!in_.peek().is_keyword("return")) read_statement();
    read_return(outputs);
    in_.expect_punct("}");
    --body_depth_;
    scope_ = outer;
    return body;
  }

  // `return values` of the scope's graph, checked against its signature.
  void read_return(const std::vector<Parameter>& signature) {
    Token keyword = in_.expect_keyword("return");
    std::vector<Token> returned;
    if (in_.peek().kind == TokenKind::kValue) {
      do {
        returned.push_back(in_.expect(TokenKind::kValue, "a value such as %x"));
      } while (in_.accept_punct(","));
    }
    if (returned.size() != signature.size()) {
      in_.error_at(keyword, fmt::format("return lists {} values, but the signature has {} "
                                        "outputs", returned.size(), signature.size()));
    }
    for (size_t i = 0; i < returned.size(); ++i) {
      const Parameter& declared = signature[i];
      if (returned[i].text != declared.token.text) {
        in_.error_at(returned[i], fmt::format("return value {} is {}, but the signature names "
                                              "{}", i, describe(returned[i]),
                                              describe(declared.token)));
      }
      Value* value = lookup(returned[i]);
      // A node output written without a type takes the one the signature gives.
      if (declared.type && !value->has_type) {
        value->type = *declared.type;
        value->has_type = true;
      }
      if (declared.type && *declared.type != value->type) {
        in_.error_at(declared.token, fmt::format("the signature gives {} type {}, but it is "
                                                 "defined with type {}",
                                                 describe(declared.token),
                                                 type_string(*declared.type),
                                                 type_string(value->type)));
      }
      scope_->graph->add_output(value);
    }
  }

  std::map<std::string, Token> read_resources() {
    std::map<std::string, Token> resources;
    in_.expect_punct("{");
    while (!in_.accept_punct("}")) {
      Token name_token = in_.peek();
      std::string name = read_name("a resource name or '}'");
      in_.expect_punct(":");
      Token hex = in_.expect(TokenKind::kString, "the resource's bytes as a hex string");
      if (!resources.emplace(name, std::move(hex)).second) {
        in_.error_at(name_token, fmt::format("resource '{}' is given twice", name));
      }
    }
    return resources;
  }

  void fill_resources(const std::map<std::string, Token>& resources) {
    for (PendingResource& pending : pending_) {
      const std::string& name = *pending.literal.resource;
      auto it = resources.find(name);
      if (it == resources.end()) {
        in_.error_at(pending.literal.where,
                     fmt::format("no resource '{}' in the resources section", name));
      }
      Tensor data = graph_text::tensor_from_hex(in_, pending.literal, it->second);
      if (pending.value) {
        pending.value->constant = std::make_shared<const Tensor>(std::move(data));
      } else {
        pending.node->attributes[pending.attribute] = std::move(data);
      }
    }
  }

  TokenCursor in_;
  Graph graph_;
  Scope top_;              // the top-level graph's scope
  Scope* scope_ = nullptr;  // the scope statements are read into now
  int body_depth_ = 0;      // how many bodies enclose the statement read now
  std::vector<PendingResource> pending_;
};

}  // namespace

Graph parse_graph(const std::string& text, const std::string& source) {
  return Parser(text, source).parse();
}

}  // namespace minic
