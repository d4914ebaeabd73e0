#pragma once

#include <QFrame>
#include <QList>
#include <QPair>

class QAction;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QTextDocument;
class QTextEdit;
class QToolButton;

namespace loopscope {

// Find-in-pane for any text view (QPlainTextEdit, QTextEdit, JsonView::textView(),
// CodeEditor): one call, FindBar::attach(edit), gives the pane
//  - Ctrl+F (QKeySequence::Find) opening a bar over the pane's top-right corner. The shortcut
//    lives on the pane with Qt::WidgetWithChildrenShortcut, so it works for whichever pane has
//    focus, in floating docks too, and never collides with another pane's;
//  - Enter / Shift+Enter next / previous (wrapping around), Esc closes and refocuses the pane;
//  - "3 of 12" or a visible "No matches" state, all matches highlighted;
//  - a Wrap toggle (line wrap on/off, also Alt+Z on the pane) for long lines and tracebacks.
// Case-insensitive plain-text search. The bar is a child of the pane and dies with it.
class FindBar : public QFrame {
    Q_OBJECT
public:
    static FindBar *attach(QPlainTextEdit *edit);
    static FindBar *attach(QTextEdit *edit);
    // The bar attached to `pane`, or nullptr.
    static FindBar *of(const QWidget *pane);

    QWidget *pane() const { return m_pane; }
    QLineEdit *field() const { return m_field; }
    QLabel *statusLabel() const { return m_status; }
    QToolButton *wrapButton() const { return m_wrapButton; }
    // Checkable "Wrap lines" and "Find…" actions, for the owner's menus and toolbars.
    QAction *wrapAction() const { return m_wrapAction; }
    QAction *findAction() const { return m_findAction; }

    int matchCount() const { return int(m_matches.size()); }
    int currentMatch() const { return m_current + 1; } // 1-based; 0 = none selected
    bool noMatches() const;                            // a query with zero matches
    bool wrapEnabled() const;
    QString statusText() const;

public slots:
    // Shows the bar, prefills it with the pane's one-line selection, focuses the field.
    void open();
    void dismiss();
    void findNext();
    void findPrevious();
    void setWrapEnabled(bool on);
    void setQuery(const QString &text);

signals:
    void matchesChanged(int current, int count);

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    FindBar(QWidget *pane, QTextDocument *document);
    void setUp();
    void refresh();         // recounts after a query or document change, keeps the current match
    void scheduleRefresh(); // the pane's text changed: one refresh() after it
    void select(int index);
    void highlightAll();
    void reposition();
    void updateStatus();
    QPair<int, int> paneSelection() const;
    void setPaneSelection(int start, int end);

    QWidget *m_pane;
    QPlainTextEdit *m_plain = nullptr;
    QTextEdit *m_rich = nullptr;
    QTextDocument *m_document;
    QLineEdit *m_field;
    QLabel *m_status;
    QToolButton *m_previous;
    QToolButton *m_next;
    QToolButton *m_wrapButton;
    QToolButton *m_close;
    QAction *m_wrapAction;
    QAction *m_findAction;
    QList<QPair<int, int>> m_matches; // [start, end) document positions
    int m_current = -1;
    bool m_capped = false;
    bool m_refreshQueued = false;
};

} // namespace loopscope
