#pragma once

#include <QAbstractItemModel>
#include <QHash>
#include <QJsonArray>
#include <QJsonObject>
#include <QPointer>

class QTimer;

namespace loopscope {

class FlowQueryClient;
class FlowStore;
class FlowSummaryMailbox;

// Whole agent runs from the store (FlowQuery::runs): one top-level row per run, most recently
// active first, with its totals (duration, tokens, cost, code runs, code errors, client-side
// tool calls); its children are every flow of the run in the order they started. Reloaded on
// a worker when the store reports a flow of any run (throttled to kReloadIntervalMs).
class RunsModel : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column {
        NameColumn, // run start time, title (else id) / flow start time and model
        StatusColumn,
        DurationColumn,
        TokensColumn,
        CostColumn,
        CodeRunsColumn,
        ErrorsColumn,
        ToolCallsColumn,
        ColumnCount
    };
    enum Role {
        FlowIdRole = Qt::UserRole + 1, // empty on run rows
        RunIdRole,
        StatusKindRole, // flow rows: int(FlowListModel::StatusKind)
    };
    static constexpr int kReloadIntervalMs = 500;
    static constexpr int kRunLimit = 200;

    explicit RunsModel(FlowQueryClient *client, QObject *parent = nullptr);

    void setFlowStore(FlowStore *store);
    FlowQueryClient *client() const { return m_client; }

    QModelIndex index(int row, int column, const QModelIndex &parent = {}) const override;
    QModelIndex parent(const QModelIndex &child) const override;
    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    QModelIndex indexOfRun(const QString &runId) const;
    QModelIndex indexOfFlow(const QString &flowId) const;
    // The run object (spec shape plus "flow_summaries") as last loaded.
    QJsonObject runAt(int row) const;
    bool isLoading() const { return m_loading; }
    // While not live (the Runs view is hidden) store changes only mark the runs stale; going
    // live reloads them once. Regrouping every run on each change costs the GUI thread a model
    // reset, which nobody needs while the view is behind another tab.
    void setLive(bool live);
    bool isLive() const { return m_live; }
    // A reload is due (its throttle runs) or one is in flight.
    bool isReloadPending() const;
    // A run's title (RunConversation::title of its first flow: the first user text, the
    // client, the model), "" until read; run rows show it instead of the bare run id.
    QString titleOf(const QString &runId) const { return m_titles.value(runId); }

public slots:
    void reload();

signals:
    void loaded();
    void titlesRead();

private:
    struct Run {
        QJsonObject run;
        QList<QJsonObject> flows; // in start order
        int codeErrors = 0;
    };
    void apply(const QJsonArray &runs);
    void scheduleReload();
    void readTitles(); // of listed runs without one, off the GUI thread

    FlowQueryClient *m_client;
    QPointer<FlowStore> m_store;
    QPointer<FlowSummaryMailbox> m_summaries; // the store's summaries, one per flow while busy
    QList<Run> m_runs;
    QHash<QString, QString> m_titles; // run id → title (a run's first flow does not change)
    bool m_readingTitles = false;
    QTimer *m_throttle;
    bool m_loading = false;
    bool m_again = false;
    bool m_live = true;
    bool m_stale = false;
};

} // namespace loopscope
