#include "config/yamldocument.h"

#include <QFile>
#include <QJsonArray>
#include <QRegularExpression>

#include <yaml-cpp/yaml.h>

#include <limits>

namespace loopscope {

namespace {

// Scalars keep YAML's plain/quoted distinction: a quoted "5" stays a string, a plain 5 a number.
QJsonValue scalarToJson(const YAML::Node &node) {
    const std::string &text = node.Scalar();
    const QString qtext = QString::fromStdString(text);
    if (node.Tag() == "!" || node.Tag() == "tag:yaml.org,2002:str") // quoted, or tagged !!str
        return qtext;
    if (text == "~" || text == "null" || text == "Null" || text == "NULL" || text.empty())
        return QJsonValue::Null;
    if (text == "true" || text == "True" || text == "TRUE")
        return true;
    if (text == "false" || text == "False" || text == "FALSE")
        return false;
    // Numbers only in YAML 1.2 core-schema spellings, so plain `inf`, `nan` or `1_000` stay text.
    static const QRegularExpression intPattern(QStringLiteral("^[-+]?[0-9]+$"));
    static const QRegularExpression floatPattern(
        QStringLiteral("^[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?$"));
    if (intPattern.match(qtext).hasMatch()) {
        bool isInt = false;
        const qlonglong asInt = qtext.toLongLong(&isInt);
        if (isInt)
            return QJsonValue(asInt);
        return qtext.toDouble(); // too large for 64 bits
    }
    if (floatPattern.match(qtext).hasMatch())
        return qtext.toDouble();
    if (text == ".inf" || text == ".Inf" || text == ".INF" || text == "+.inf" || text == "+.Inf" ||
        text == "+.INF")
        return std::numeric_limits<double>::infinity();
    if (text == "-.inf" || text == "-.Inf" || text == "-.INF")
        return -std::numeric_limits<double>::infinity();
    if (text == ".nan" || text == ".NaN" || text == ".NAN")
        return std::numeric_limits<double>::quiet_NaN();
    return qtext;
}

// Bounds for the conversion: YAML aliases can refer to their own ancestors (endless recursion,
// found by tests/fuzz/config) or repeat a large node many times ("billion laughs").
constexpr int kMaxDepth = 64;
constexpr qint64 kMaxValues = 100000;

struct Walk {
    QHash<QString, int> &lines;
    qint64 values = 0;
    bool tooBig = false;
};

QJsonValue toJson(const YAML::Node &node, const QString &path, Walk &walk, int depth) {
    if (walk.tooBig || depth > kMaxDepth || ++walk.values > kMaxValues) {
        walk.tooBig = true;
        return QJsonValue::Null;
    }
    walk.lines.insert(path, node.Mark().line + 1);
    switch (node.Type()) {
    case YAML::NodeType::Scalar:
        return scalarToJson(node);
    case YAML::NodeType::Sequence: {
        QJsonArray array;
        int index = 0;
        for (const auto &child : node)
            array.append(
                toJson(child, path + u'[' + QString::number(index++) + u']', walk, depth + 1));
        return array;
    }
    case YAML::NodeType::Map: {
        QJsonObject object;
        for (const auto &pair : node) {
            const QString key = QString::fromStdString(pair.first.as<std::string>());
            const QString childPath = path.isEmpty() ? key : path + u'.' + key;
            object.insert(key, toJson(pair.second, childPath, walk, depth + 1));
            // A key's line is where users look ("enabled_providers:"), also when its value is a
            // nested block starting on the next line or empty.
            walk.lines.insert(childPath, pair.first.Mark().line + 1);
        }
        return object;
    }
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
        return QJsonValue::Null;
    }
    return QJsonValue::Null;
}

} // namespace

YamlDocument YamlDocument::fromText(const QByteArray &text) {
    YamlDocument doc;
    try { // yaml-cpp reports errors by exception; they stop here.
        const YAML::Node root = YAML::Load(text.toStdString());
        if (!root.IsDefined() || root.IsNull()) {
            doc.m_root = {};
            return doc;
        }
        if (!root.IsMap()) {
            doc.m_error =
                QStringLiteral("config root must be a mapping (line %1)").arg(root.Mark().line + 1);
            return doc;
        }
        Walk walk{doc.m_lines};
        doc.m_root = toJson(root, QString(), walk, 0).toObject();
        if (walk.tooBig) {
            doc.m_root = {};
            doc.m_lines.clear();
            doc.m_error = QStringLiteral("config nests deeper than %1 levels or holds more than %2 "
                                         "values (a YAML alias that refers to itself?)")
                              .arg(kMaxDepth)
                              .arg(kMaxValues);
        }
    } catch (const YAML::Exception &e) {
        doc.m_error = QStringLiteral("invalid YAML at line %1, column %2: %3")
                          .arg(e.mark.line + 1)
                          .arg(e.mark.column + 1)
                          .arg(printable(QString::fromStdString(e.msg)));
    }
    return doc;
}

QString YamlDocument::printable(const QString &text) {
    QString out;
    out.reserve(text.size());
    for (const QChar c : text) {
        if (c.unicode() < 0x20 || c.unicode() == 0x7f || c == QChar::LineSeparator ||
            c == QChar::ParagraphSeparator)
            out += QStringLiteral("\\x%1").arg(c.unicode(), 2, 16, QLatin1Char('0'));
        else
            out += c;
    }
    return out;
}

YamlDocument YamlDocument::fromFile(const QString &path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        YamlDocument doc;
        doc.m_error = QStringLiteral("cannot read config %1: %2").arg(path, file.errorString());
        return doc;
    }
    return fromText(file.readAll());
}

} // namespace loopscope
