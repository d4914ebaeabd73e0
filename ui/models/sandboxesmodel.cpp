#include "models/sandboxesmodel.h"

#include "inspect/credentialpolicy.h"
#include "inspect/textformat.h"

#include "sandbox/sandboxregistry.h"
#include <algorithm>

#include <QDateTime>

namespace loopscope {

namespace {

qint64 toInt64(const QJsonValue &value) {
    return value.isDouble() ? qint64(value.toDouble()) : 0;
}

QString formatTime(qint64 ms) {
    return ms > 0 ? QDateTime::fromMSecsSinceEpoch(ms).toString(QStringLiteral("HH:mm:ss"))
                  : QString();
}

// A countdown in whole seconds, in the window's one duration format.
QString formatRemaining(qint64 ms) {
    if (ms <= 0)
        return SandboxesModel::tr("due");
    return textformat::formatDuration(double(ms / 1000 * 1000));
}

// The log's way: the key's last 4 ("…a1b2"). Until a code run links the sandbox to its
// request only the registry's identity is known: a hash of the key (its suffix would mislead,
// so it is not shown) or "anonymous" (no key).
QString identityText(const SandboxesModel::Sandbox &s) {
    if (!s.keyHint.isEmpty())
        return s.keyHint;
    if (s.identity.isEmpty())
        return {};
    const QString masked = textformat::maskedIdentity(s.identity);
    return masked.startsWith(QChar(0x2026)) && s.identity.startsWith(QChar(0x2026)) ? QString()
                                                                                    : masked;
}

// The key part of a masked Authorization header ("Bearer …a1b2" → "…a1b2").
QString keyFromAuthorization(const QString &header) {
    if (header.isEmpty())
        return textformat::maskedIdentity({});
    const qsizetype space = header.indexOf(u' ');
    return textformat::maskedIdentity(space < 0 ? header : header.mid(space + 1).trimmed());
}

} // namespace

qint64 SandboxesModel::Sandbox::effectiveExpiry(qint64 idleTtlMs) const {
    if (expiresAtMs > 0)
        return expiresAtMs;
    return (lastUsedMs > 0 ? lastUsedMs : createdMs) +
           (ownIdleTtlMs > 0 ? ownIdleTtlMs : idleTtlMs);
}

SandboxesModel::SandboxesModel(QObject *parent)
    : QAbstractTableModel(parent)
    , m_now([] { return QDateTime::currentMSecsSinceEpoch(); })
    , m_idleTtlMs(SandboxRegistry::kIdleTtlMs) {}

void SandboxesModel::setClock(std::function<qint64()> nowMs) {
    m_now = std::move(nowMs);
}

int SandboxesModel::rowCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : int(m_rows.size());
}

int SandboxesModel::columnCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant SandboxesModel::data(const QModelIndex &index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Sandbox &s = m_rows[size_t(index.row())];
    if (role == ContainerIdRole)
        return s.containerId;
    if (role == StateRole)
        return int(s.state);
    if (role == Qt::ToolTipRole) {
        if (s.state == State::DeleteFailed)
            return s.error;
        if (index.column() == IdentityColumn)
            return tr("The caller's API key, its last 4 characters as the log shows them. A "
                      "session sandbox serves only the key that created it.");
        // Columns are sized to stay visible, so any cell may be elided: the tool tip has it.
        const QString text = data(index, Qt::DisplayRole).toString();
        return index.column() == ContainerColumn || text.isEmpty()
                   ? s.containerId
                   : s.containerId + QStringLiteral("\n") + text;
    }
    if (role != Qt::DisplayRole && role != SortRole)
        return {};
    const bool sort = role == SortRole;
    switch (index.column()) {
    case ContainerColumn:
        return s.containerId;
    case SessionColumn:
        return s.sessionId;
    case IdentityColumn:
        return identityText(s);
    case BackendColumn:
        return s.provider;
    case KindColumn:
        return s.ephemeral ? tr("ephemeral") : tr("session");
    case CreatedColumn:
        return sort ? QVariant(s.createdMs) : QVariant(formatTime(s.createdMs));
    case LastUsedColumn:
        return sort ? QVariant(s.lastUsedMs) : QVariant(formatTime(s.lastUsedMs));
    case ExpiresColumn: {
        if (s.ephemeral)
            return sort ? QVariant(qint64(-1)) : QVariant(tr("after request"));
        const qint64 remaining = s.effectiveExpiry(m_idleTtlMs) - m_now();
        return sort ? QVariant(remaining) : QVariant(formatRemaining(remaining));
    }
    case RunsColumn:
        return s.runs;
    case StateColumn:
        switch (s.state) {
        case State::Live:
            return tr("live");
        case State::Deleting:
            return tr("deleting…");
        case State::DeleteFailed:
            return tr("delete failed");
        }
        return {};
    default:
        return {};
    }
}

QVariant SandboxesModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case ContainerColumn:
        return tr("Container");
    case SessionColumn:
        return tr("Session");
    case IdentityColumn:
        return tr("Identity");
    case BackendColumn:
        return tr("Backend");
    case KindColumn:
        return tr("Kind");
    case CreatedColumn:
        return tr("Created");
    case LastUsedColumn:
        return tr("Last used");
    case ExpiresColumn:
        return tr("Expires in");
    case RunsColumn:
        return tr("Runs");
    case StateColumn:
        return tr("State");
    default:
        return {};
    }
}

int SandboxesModel::rowOf(const QString &containerId) const {
    return m_rowOf.value(containerId, -1);
}

const SandboxesModel::Sandbox *SandboxesModel::sandbox(int row) const {
    if (row < 0 || row >= int(m_rows.size()))
        return nullptr;
    return &m_rows[size_t(row)];
}

QStringList SandboxesModel::containerIds() const {
    QStringList ids;
    ids.reserve(qsizetype(m_rows.size()));
    for (const Sandbox &s : m_rows)
        ids.append(s.containerId);
    return ids;
}

int SandboxesModel::sessionCount() const {
    return int(
        std::count_if(m_rows.begin(), m_rows.end(), [](const Sandbox &s) { return !s.ephemeral; }));
}

void SandboxesModel::applyEvents(const QList<InspectorEvent> &events) {
    for (const InspectorEvent &event : events)
        applyEvent(event);
}

void SandboxesModel::applyEvent(const InspectorEvent &event) {
    using Kind = InspectorEvent::Kind;
    if (event.kind == Kind::ClientRequest && !event.requestId.isEmpty()) {
        m_keyOfRequest.insert(event.requestId,
                              keyFromAuthorization(event.data.value(QLatin1String("headers"))
                                                       .toObject()
                                                       .value(QLatin1String("authorization"))
                                                       .toString()));
        return;
    }
    if (event.kind == Kind::RequestFinished || event.kind == Kind::RequestFailed) {
        m_keyOfRequest.remove(event.requestId);
        return;
    }
    const QString containerId = event.data.value(QLatin1String("containerId")).toString();
    if (containerId.isEmpty())
        return;
    switch (event.kind) {
    case Kind::SandboxCreated:
    case Kind::SandboxReused:
        upsert(event);
        break;
    case Kind::SandboxDeleted:
    case Kind::SandboxEvicted:
    case Kind::SandboxExpired:
        if (const int row = rowOf(containerId); row >= 0)
            removeRow(row);
        break;
    case Kind::SandboxDeleteFailed:
        if (const int row = rowOf(containerId); row >= 0) {
            m_rows[size_t(row)].state = State::DeleteFailed;
            m_rows[size_t(row)].error = event.data.value(QLatin1String("error")).toString();
            touchRow(row);
        }
        break;
    case Kind::CodeExecuted:
        // A run refreshes the registry's last access; the registry emits nothing for it.
        if (const int row = rowOf(containerId); row >= 0) {
            Sandbox &s = m_rows[size_t(row)];
            s.runs += 1;
            s.lastUsedMs = std::max(s.lastUsedMs, event.timestampMs);
            if (const auto key = m_keyOfRequest.constFind(event.requestId);
                key != m_keyOfRequest.cend())
                s.keyHint = *key;
            s.expiresAtMs = 0;
            touchRow(row);
        }
        break;
    default:
        break;
    }
}

void SandboxesModel::upsert(const InspectorEvent &event) {
    const QJsonObject &d = event.data;
    const QString containerId = d.value(QLatin1String("containerId")).toString();
    int row = rowOf(containerId);
    const bool isNew = row < 0;
    Sandbox s = isNew ? Sandbox{} : m_rows[size_t(row)];
    s.containerId = containerId;
    const auto setString = [&d](const char *key, QString &field) {
        const QJsonValue v = d.value(QLatin1String(key));
        if (v.isString())
            field = v.toString();
    };
    setString("provider", s.provider);
    setString("sessionId", s.sessionId);
    setString("identity", s.identity);
    if (d.contains(QLatin1String("ephemeral")))
        s.ephemeral = d.value(QLatin1String("ephemeral")).toBool();
    else if (isNew)
        s.ephemeral = s.sessionId.isEmpty() && s.identity.isEmpty();
    if (d.contains(QLatin1String("createdMs")))
        s.createdMs = toInt64(d.value(QLatin1String("createdMs")));
    else if (isNew)
        s.createdMs = event.timestampMs;
    if (d.contains(QLatin1String("lastUsedMs")))
        s.lastUsedMs = toInt64(d.value(QLatin1String("lastUsedMs")));
    else
        s.lastUsedMs = event.timestampMs;
    s.expiresAtMs = toInt64(d.value(QLatin1String("expiresAtMs")));
    // The registry's expiry is last use + this container's idle time (expires_after): keep that
    // idle time, so a later run (which resets expiresAtMs) counts down from the right length.
    if (s.expiresAtMs > 0 && d.contains(QLatin1String("lastUsedMs")))
        s.ownIdleTtlMs = s.expiresAtMs - s.lastUsedMs;
    if (d.contains(QLatin1String("runs")))
        s.runs = std::max(s.runs, d.value(QLatin1String("runs")).toInt());

    if (isNew) {
        row = int(m_rows.size());
        beginInsertRows({}, row, row);
        m_rows.push_back(std::move(s));
        m_rowOf.insert(containerId, row);
        endInsertRows();
    } else {
        m_rows[size_t(row)] = std::move(s);
        touchRow(row);
    }
}

void SandboxesModel::removeRow(int row) {
    beginRemoveRows({}, row, row);
    m_rowOf.remove(m_rows[size_t(row)].containerId);
    m_rows.erase(m_rows.begin() + row);
    // Few sandboxes live at once (the registry caps them), so renumbering the tail is cheap.
    for (int i = row; i < int(m_rows.size()); ++i)
        m_rowOf[m_rows[size_t(i)].containerId] = i;
    endRemoveRows();
}

void SandboxesModel::touchRow(int row) {
    emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
}

void SandboxesModel::markDeleting(const QString &containerId) {
    if (const int row = rowOf(containerId);
        row >= 0 && m_rows[size_t(row)].state != State::Deleting) {
        m_rows[size_t(row)].state = State::Deleting;
        touchRow(row);
    }
}

void SandboxesModel::noteSession(const QString &containerId, const QString &sessionId) {
    const int row = rowOf(containerId);
    if (row < 0 || sessionId.isEmpty() || !m_rows[size_t(row)].sessionId.isEmpty())
        return;
    m_rows[size_t(row)].sessionId = sessionId;
    touchRow(row);
}

void SandboxesModel::refreshExpiry() {
    if (!m_rows.empty())
        emit dataChanged(index(0, ExpiresColumn), index(int(m_rows.size()) - 1, ExpiresColumn),
                         {Qt::DisplayRole, SortRole});
}

void SandboxesModel::clear() {
    if (m_rows.empty())
        return;
    beginResetModel();
    m_keyOfRequest.clear();
    m_rows.clear();
    m_rowOf.clear();
    endResetModel();
}

} // namespace loopscope
