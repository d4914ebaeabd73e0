#pragma once

#include "inspect/inspectorevent.h"

#include <QAbstractTableModel>
#include <QHash>

#include <functional>
#include <vector>

namespace loopscope {

// Every live sandbox, keyed by container id, kept up to date from Sandbox* and CodeExecuted
// events: rows appear on creation, refresh on reuse and runs, and go away when the registry
// reports them deleted, evicted or expired. "Expires in" is computed against a clock so a
// one-second tick (refreshExpiry) keeps it current without events.
class SandboxesModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        ContainerColumn,
        SessionColumn,
        IdentityColumn,
        BackendColumn,
        KindColumn,
        CreatedColumn,
        LastUsedColumn,
        ExpiresColumn,
        RunsColumn,
        StateColumn,
        ColumnCount
    };
    enum Role { ContainerIdRole = Qt::UserRole + 1, SortRole, StateRole };
    enum class State { Live, Deleting, DeleteFailed };

    struct Sandbox {
        QString containerId;
        QString provider;
        QString sessionId;
        QString identity; // masked by the publisher: the last 4 of a hash of the key
        // The caller's key as the log shows it ("…a1b2"), learned from the request that ran
        // code in it; "no key" when the client sent none. Empty until then.
        QString keyHint;
        bool ephemeral = true;
        qint64 createdMs = 0;
        qint64 lastUsedMs = 0;
        qint64 expiresAtMs = 0;  // 0 = unknown: derived from last use + idle TTL
        qint64 ownIdleTtlMs = 0; // the container's own expires_after (0 = the default)
        int runs = 0;
        State state = State::Live;
        QString error;

        qint64 effectiveExpiry(qint64 idleTtlMs) const;
    };

    explicit SandboxesModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    void setClock(std::function<qint64()> nowMs);
    void setIdleTtlMs(qint64 ms) { m_idleTtlMs = ms; }

    int rowOf(const QString &containerId) const;
    const Sandbox *sandbox(int row) const;
    QStringList containerIds() const;
    // Live session-scoped sandboxes (what a proxy restart would delete, Python state lost).
    int sessionCount() const;

public slots:
    void applyEvents(const QList<loopscope::InspectorEvent> &events);
    void applyEvent(const loopscope::InspectorEvent &event);
    // The user asked to delete it: shown as "deleting…" until the registry reports back.
    void markDeleting(const QString &containerId);
    // Fills in the session of a sandbox whose events did not name it (learned from the request
    // that ran code in it); a session already known is kept.
    void noteSession(const QString &containerId, const QString &sessionId);
    // Re-evaluates "expires in" for every row.
    void refreshExpiry();
    // Forgets every row (the registry is not touched).
    void clear();

private:
    void upsert(const InspectorEvent &event);
    void removeRow(int row);
    void touchRow(int row);

    std::vector<Sandbox> m_rows;
    // Request id → its key as the log shows it, while the request runs (ClientRequest's masked
    // Authorization header); a CodeExecuted event carries it to the sandbox.
    QHash<QString, QString> m_keyOfRequest;
    QHash<QString, int> m_rowOf;
    std::function<qint64()> m_now;
    qint64 m_idleTtlMs;
};

} // namespace loopscope
