#pragma once

#include <QJsonValue>
#include <QWidget>

class QPlainTextEdit;
class QTabWidget;
class QTreeView;

namespace loopscope {

class JsonTreeModel;

// One JSON document, shown both as a collapsible tree and as pretty text, with a Copy button.
// Whatever is passed in is shown as is: callers mask secrets first.
class JsonView : public QWidget {
    Q_OBJECT
public:
    explicit JsonView(QWidget *parent = nullptr);

    void setJson(const QJsonValue &value);
    QJsonValue json() const { return m_json; }
    QString prettyText() const;

    JsonTreeModel *treeModel() const { return m_model; }
    QTreeView *treeView() const { return m_tree; }
    QPlainTextEdit *textView() const { return m_text; }

    // Pretty text of any JSON value (objects and arrays indented; scalars as JSON literals).
    static QString toPrettyText(const QJsonValue &value);

public slots:
    void copyToClipboard() const;
    // Copies the JSON under the tree's current item (context menu "Copy subtree").
    void copySelectedSubtree() const;

private:
    QJsonValue m_json;
    JsonTreeModel *m_model;
    QTabWidget *m_tabs;
    QTreeView *m_tree;
    QPlainTextEdit *m_text;
};

} // namespace loopscope
