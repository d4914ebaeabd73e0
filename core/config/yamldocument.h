#pragma once

#include <QHash>
#include <QJsonObject>
#include <QString>

namespace loopscope {

// A YAML file (LiteLLM's config.yaml subset) read with yaml-cpp and turned into JSON values,
// keeping the source line of every node so config errors can name "key (line N)".
class YamlDocument {
public:
    static YamlDocument fromText(const QByteArray &text);
    static YamlDocument fromFile(const QString &path);
    // `text` with control characters as \xNN: config messages quote keys and values from the
    // file (and yaml-cpp's own messages quote the offending character), and must stay one line.
    static QString printable(const QString &text);

    bool isValid() const { return m_error.isEmpty(); }
    QString error() const { return m_error; } // parse/IO error with line, when invalid
    QJsonObject root() const { return m_root; }
    // 1-based line of the node at a dotted path such as "model_list[0].litellm_params.model",
    // or 0 when unknown.
    int lineOf(const QString &path) const { return m_lines.value(path, 0); }

private:
    QJsonObject m_root;
    QHash<QString, int> m_lines;
    QString m_error;
};

} // namespace loopscope
