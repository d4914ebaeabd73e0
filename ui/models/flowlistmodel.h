#pragma once

#include "record/flowquery.h"

#include <QAbstractTableModel>
#include <QHash>
#include <QJsonObject>
#include <QPointer>
#include <QSet>
#include <QTimer>

#include <deque>
#include <utility>

namespace loopscope {

class FlowQueryClient;
class FlowStore;
class FlowSummaryMailbox;

// The Requests table over the flow store: summaries newest first, paged lazily from FlowQuery
// (canFetchMore/fetchMore, kPageSize rows a page via `before=`), so scrolling reaches every
// stored flow while only compact summaries are kept (no bodies). Live rows come from the
// store's flowStarted/Updated/Finished: a new flow goes on top, a known one is updated in place.
// Filters: state and text run in the store (q= is its full-text search over bodies, code and
// output); "code errors only" is applied to the summaries as pages arrive.
class FlowListModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        TimeColumn,
        ApiColumn,
        ModelColumn,
        StatusColumn,
        IterationsColumn,
        CodeRunsColumn,
        DurationColumn,
        TokensColumn,
        CostColumn,
        ColumnCount
    };
    enum Role {
        FlowIdRole = Qt::UserRole + 1,
        StateRole,      // "running" | "paused" | "completed" | "failed"
        StatusKindRole, // int(StatusKind): what the status cell's icon and colour show
        RunIdRole,
        ImportedRole,
        ReplayOfRole,
    };
    enum class StatusKind { Running, Paused, Ok, CodeError, Incomplete, Failed };
    Q_ENUM(StatusKind)
    static constexpr int kPageSize = 200;
    static constexpr int kElapsedTickMs = 500;
    static constexpr int kLiveBatchMs = 50; // live inserts/updates are applied this often

    struct Filter {
        QString state;           // "" = any, else a FlowFilter state
        bool codeErrors = false; // only flows whose code raised
        QString text;            // the store's full-text search (q=)
        friend bool operator==(const Filter &, const Filter &) = default;
    };

    explicit FlowListModel(FlowQueryClient *client, QObject *parent = nullptr);

    // The status cell of a summary ("200 · code error", "failed 502: why", "paused", …) and
    // the kind its icon shows; shared with the Runs view.
    static QString statusText(const QJsonObject &summary);
    static StatusKind statusKind(const QJsonObject &summary);
    ~FlowListModel() override;

    // Follows `store`'s live signals and loads its first page (the client must read the same
    // store). Null: empty.
    void setFlowStore(FlowStore *store);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;
    bool canFetchMore(const QModelIndex &parent) const override;
    void fetchMore(const QModelIndex &parent) override;

    void setFilter(const Filter &filter);
    const Filter &filter() const { return m_filter; }

    int rowOf(const QString &id) const; // -1 when not loaded
    QString idAt(int row) const;
    QJsonObject summaryAt(int row) const; // the spec summary as last seen
    // At most this many rows stay in memory as live flows arrive (Settings → "Requests kept");
    // rows paged in by scrolling are not limited.
    void setLiveRowLimit(int limit);
    int liveRowLimit() const { return m_liveRowLimit; }
    bool isLoading() const { return m_loading; }
    // Live changes wait for their batch (kLiveBatchMs) to be applied.
    bool isLiveBatchPending() const { return m_liveTimer.isActive(); }
    bool hasMore() const { return m_hasMore; }
    // Whether any row shown has a known cost (the Cost column is hidden otherwise).
    bool anyCostKnown() const { return m_costKnown > 0; }
    // Number of running/paused rows loaded.
    int runningCount() const { return int(m_unfinished.size()); }

public slots:
    // Drops every row and loads the first page again (after clear, import, delete).
    void reload();
    // Forgets rows whose id is listed (after a delete) without a reload.
    void removeIds(const QStringList &ids);

signals:
    // A page arrived (the first one after a reload or filter change included).
    void pageLoaded(int rowsAdded, bool hasMore);
    void loadingChanged(bool loading);
    void anyCostKnownChanged(bool known);

private:
    struct Row {
        QJsonObject summary;
        QString id;
    };

    void onLive(const QJsonObject &summary, bool isNew);
    void scheduleLiveFlush();
    void flushLive();
    bool accepts(const QJsonObject &summary) const;
    void appendPage(const QJsonObject &page, quint64 generation);
    void requestPage();
    void countCost(const QJsonObject &summary, int delta);
    void setLoading(bool loading);
    void reindex();
    void trimToLiveLimit();
    void tickElapsed();
    void trackState(const QString &id, const QJsonObject &summary);
    // First and last row of the listed ids ({INT_MAX, -1} when none is listed).
    std::pair<int, int> rowSpan(const QSet<QString> &ids) const;
    void startTickerIfRunning();
    const Row &rowAt(int row) const { return m_rows[size_t(row)]; }

    FlowQueryClient *m_client;
    QPointer<FlowStore> m_store;
    QPointer<FlowSummaryMailbox> m_summaries; // the store's summaries, one per flow while busy
    Filter m_filter;
    std::deque<Row> m_rows;
    QHash<QString, qint64> m_pos; // id -> absolute position; row = position - m_front
    qint64 m_front = 0;
    bool m_hasMore = false;
    bool m_loading = false;
    bool m_trimDeferred = false;    // live rows outgrew the limit while a page loaded
    bool m_pageWithinLimit = false; // the page in flight was asked for below the limit
    bool m_limitDropped = false;    // live rows left memory since the last reload
    quint64 m_generation = 0;
    int m_costKnown = 0;
    int m_emptyPagesInARow = 0;
    int m_liveRowLimit = 5000;
    QString m_pageAnchor;  // last flow id of the last page
    QList<Row> m_incoming; // live flows not inserted yet (oldest first)
    QHash<QString, int> m_incomingIndex;
    QSet<QString> m_changedRows; // listed rows changed since the last flush
    QTimer m_liveTimer;
    QTimer m_elapsedTicker; // running rows' Duration while any runs
    // Listed rows that are running or paused: the ticker touches these, not every row (a scan
    // of 130,000 rows every tick was the window's longest stall under load).
    QSet<QString> m_unfinished;
};

} // namespace loopscope
