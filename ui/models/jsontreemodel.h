#pragma once

#include <QAbstractItemModel>
#include <QJsonValue>

#include <memory>
#include <vector>

namespace loopscope {

// A read-only, collapsible tree over one JSON document: objects and arrays are branches, scalars
// leaves. Built once per document (documents are replaced, never edited).
class JsonTreeModel : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column { KeyColumn, ValueColumn, TypeColumn, ColumnCount };
    enum Role { JsonValueRole = Qt::UserRole + 1 }; // the subtree as a QJsonValue

    explicit JsonTreeModel(QObject *parent = nullptr);
    ~JsonTreeModel() override;

    void setJson(const QJsonValue &value);
    QJsonValue json() const { return m_json; }

    QModelIndex index(int row, int column, const QModelIndex &parent = {}) const override;
    QModelIndex parent(const QModelIndex &child) const override;
    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    struct Node {
        QString key;
        QJsonValue value;
        Node *parent = nullptr;
        int row = 0;
        std::vector<std::unique_ptr<Node>> children;
    };
    static void build(Node *node);
    const Node *nodeFor(const QModelIndex &index) const;

    QJsonValue m_json;
    std::unique_ptr<Node> m_root;
};

} // namespace loopscope
