#include "models/jsontreemodel.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace loopscope {

namespace {

QString typeName(const QJsonValue &v) {
    switch (v.type()) {
    case QJsonValue::Null:
        return QStringLiteral("null");
    case QJsonValue::Bool:
        return QStringLiteral("bool");
    case QJsonValue::Double:
        return QStringLiteral("number");
    case QJsonValue::String:
        return QStringLiteral("string");
    case QJsonValue::Array:
        return QStringLiteral("array");
    case QJsonValue::Object:
        return QStringLiteral("object");
    case QJsonValue::Undefined:
        break;
    }
    return QStringLiteral("undefined");
}

QString scalarText(const QJsonValue &v) {
    switch (v.type()) {
    case QJsonValue::Null:
        return QStringLiteral("null");
    case QJsonValue::Bool:
        return v.toBool() ? QStringLiteral("true") : QStringLiteral("false");
    case QJsonValue::Double: {
        const double d = v.toDouble();
        if (d == double(qint64(d)))
            return QString::number(qint64(d));
        return QString::number(d, 'g', 15);
    }
    case QJsonValue::String:
        return v.toString();
    case QJsonValue::Array:
        return QStringLiteral("[%1]").arg(v.toArray().size());
    case QJsonValue::Object:
        return QStringLiteral("{%1}").arg(v.toObject().size());
    case QJsonValue::Undefined:
        break;
    }
    return {};
}

} // namespace

JsonTreeModel::JsonTreeModel(QObject *parent)
    : QAbstractItemModel(parent)
    , m_root(std::make_unique<Node>()) {}

JsonTreeModel::~JsonTreeModel() = default;

void JsonTreeModel::setJson(const QJsonValue &value) {
    beginResetModel();
    m_json = value;
    m_root = std::make_unique<Node>();
    m_root->value = value;
    build(m_root.get());
    endResetModel();
}

void JsonTreeModel::build(Node *node) {
    const auto add = [node](const QString &key, const QJsonValue &value) {
        auto child = std::make_unique<Node>();
        child->key = key;
        child->value = value;
        child->parent = node;
        child->row = int(node->children.size());
        build(child.get());
        node->children.push_back(std::move(child));
    };
    if (node->value.isObject()) {
        const QJsonObject object = node->value.toObject();
        for (auto it = object.constBegin(); it != object.constEnd(); ++it)
            add(it.key(), it.value());
    } else if (node->value.isArray()) {
        const QJsonArray array = node->value.toArray();
        for (qsizetype i = 0; i < array.size(); ++i)
            add(QString::number(i), array.at(i));
    }
}

const JsonTreeModel::Node *JsonTreeModel::nodeFor(const QModelIndex &index) const {
    return index.isValid() ? static_cast<const Node *>(index.internalPointer()) : m_root.get();
}

QModelIndex JsonTreeModel::index(int row, int column, const QModelIndex &parent) const {
    if (!hasIndex(row, column, parent))
        return {};
    const Node *p = nodeFor(parent);
    return createIndex(row, column, p->children[size_t(row)].get());
}

QModelIndex JsonTreeModel::parent(const QModelIndex &child) const {
    if (!child.isValid())
        return {};
    const Node *node = nodeFor(child);
    const Node *p = node->parent;
    if (!p || p == m_root.get())
        return {};
    return createIndex(p->row, 0, const_cast<Node *>(p));
}

int JsonTreeModel::rowCount(const QModelIndex &parent) const {
    if (parent.column() > 0)
        return 0;
    return int(nodeFor(parent)->children.size());
}

int JsonTreeModel::columnCount(const QModelIndex &) const {
    return ColumnCount;
}

QVariant JsonTreeModel::data(const QModelIndex &index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const Node *node = nodeFor(index);
    if (role == JsonValueRole)
        return QVariant::fromValue(node->value);
    if (role == Qt::ToolTipRole && index.column() == ValueColumn && node->value.isString())
        return node->value.toString().left(2000);
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case KeyColumn:
        return node->key;
    case ValueColumn: {
        // Keep cells one line: long strings are shown whole in the text view and tool tip.
        QString text = scalarText(node->value);
        text.replace(u'\n', QStringLiteral("⏎"));
        return text.size() > 300 ? text.left(300) + QStringLiteral("…") : text;
    }
    case TypeColumn:
        return typeName(node->value);
    default:
        return {};
    }
}

QVariant JsonTreeModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractItemModel::headerData(section, orientation, role);
    switch (section) {
    case KeyColumn:
        return tr("Key");
    case ValueColumn:
        return tr("Value");
    case TypeColumn:
        return tr("Type");
    default:
        return {};
    }
}

} // namespace loopscope
