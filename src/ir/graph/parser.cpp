// The graph parser: the .mgraph text form → Graph (syntax in include/minic/ir/graph_text.h).
//
// Course module 2. A recursive-descent parser over the tokens of lexer.cpp, one function
// per construct of the grammar:
//
//   file       := graph resources?
//   graph      := 'graph' NAME '(' params ')' '->' '(' params ')' ('opset' INT)?
//                 '{' statement* 'return' values '}'
//   params     := (VALUE ':' type)*            separated by ','
//   statement  := VALUE '=' 'const' type data
//               | (VALUE (',' VALUE)* '=')? OP '(' inputs ')' attributes? (':' types)? NODENAME?
//   resources  := 'resources' '{' (NAME ':' STRING)* '}'
//
// The graph is built while reading, through Graph::add_input / add_constant / add_node /
// add_output, so a value must be defined before it is used: the text is in topological
// order. Node output types are set as written; no shape inference runs. A `resource<name>`
// is filled in at the end, once the `resources` section has been read.
#include "minic/ir/graph_text.h"

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

class Parser {
 public:
  Parser(const std::string& text, const std::string& source)
      : in_(graph_text::tokenize(text, source), source) {}

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
    auto [it, inserted] = defined_.emplace(token.text, token);
    if (!inserted) {
      in_.error_at(token, fmt::format("{} is already defined at line {}",
                                      describe(token), it->second.line));
    }
  }

  Value* lookup(const Token& token) {
    Value* value = graph_.find_value(token.text);
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
      in_.expected("a statement or 'return'");
    }
    read_node(outputs);
  }

  void read_constant(const std::vector<Token>& outputs) {
    Token keyword = in_.expect_keyword("const");
    if (outputs.size() != 1) in_.error_at(keyword, "a constant defines exactly one value");
    TensorType type = read_type(in_);
    TensorLiteral literal = graph_text::read_tensor_data(in_, type);
    define(outputs[0]);
    if (!literal.resource) {
      graph_.add_constant(outputs[0].text, std::move(literal.data));
      return;
    }
    Value* value = graph_.add_constant(outputs[0].text, Tensor());
    value->type = type;
    pending_.push_back({std::move(literal), value, nullptr, ""});
  }

  void read_node(const std::vector<Token>& outputs) {
    std::string op = read_name("an op name such as Conv");
    in_.expect_punct("(");
    std::vector<Value*> inputs;
    if (!in_.peek().is_punct(")")) {
      do {
        if (in_.accept_keyword("_")) {
          inputs.push_back(nullptr);
        } else {
          inputs.push_back(lookup(in_.expect(TokenKind::kValue, "an input such as %x or _")));
        }
      } while (in_.accept_punct(","));
    }
    in_.expect_punct(")");
    Attributes attributes;
    std::vector<std::pair<std::string, TensorLiteral>> attribute_resources;
    if (in_.accept_punct("{")) attributes = read_attributes(attribute_resources);
    std::vector<std::optional<TensorType>> types(outputs.size());
    if (in_.peek().is_punct(":")) {
      Token colon = in_.take();
      types.clear();
      do {
        types.push_back(read_type_or_unknown());
      } while (in_.accept_punct(","));
      if (types.size() != outputs.size()) {
        in_.error_at(colon, fmt::format("{} output types for {} outputs", types.size(),
                                        outputs.size()));
      }
    }
    std::string node_name;
    if (in_.peek().kind == TokenKind::kNodeName) node_name = in_.take().text;

    std::vector<std::string> names;
    for (const Token& output : outputs) {
      define(output);
      names.push_back(output.text);
    }
    Node* node = graph_.add_node(op, std::move(inputs), names, std::move(attributes), node_name);
    for (size_t i = 0; i < types.size(); ++i) {
      if (!types[i]) continue;
      node->outputs[i]->type = *types[i];
      node->outputs[i]->has_type = true;
    }
    for (auto& [name, literal] : attribute_resources) {
      pending_.push_back({std::move(literal), nullptr, node, name});
    }
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
      AttributeValue value = graph_text::read_attribute_value(in_, resource);
      if (!attributes.emplace(name, std::move(value)).second) {
        in_.error_at(name_token, fmt::format("attribute '{}' is given twice", name));
      }
      if (resource) resources.emplace_back(name, std::move(*resource));
    } while (in_.accept_punct(","));
    in_.expect_punct("}");
    return attributes;
  }

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
      graph_.add_output(value);
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
  std::map<std::string, Token> defined_;
  std::vector<PendingResource> pending_;
};

}  // namespace

Graph parse_graph(const std::string& text, const std::string& source) {
  return Parser(text, source).parse();
}

}  // namespace minic
