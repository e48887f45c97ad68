package dev.ratelimit.config;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.composer.Composer;
import org.snakeyaml.engine.v2.events.Event;
import org.snakeyaml.engine.v2.exceptions.ComposerException;
import org.snakeyaml.engine.v2.exceptions.Mark;
import org.snakeyaml.engine.v2.nodes.MappingNode;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.NodeTuple;
import org.snakeyaml.engine.v2.nodes.ScalarNode;
import org.snakeyaml.engine.v2.nodes.SequenceNode;
import org.snakeyaml.engine.v2.nodes.Tag;
import org.snakeyaml.engine.v2.parser.ParserImpl;
import org.snakeyaml.engine.v2.scanner.StreamReader;

/**
 * Composes a rule file into YAML nodes with the cost of its aliases bounded, however many it has.
 *
 * <p>An alias ({@code *name}) costs the composer nothing: it is the anchored node again, so the
 * node graph is no larger than the file. What costs is reading the graph as the tree it stands
 * for: a list of nine aliases of a list of nine aliases, nine levels down, is 9^9 values in a few
 * hundred bytes ("billion laughs"), and an alias inside what it names never ends. Counting aliases
 * (the parser's own guard) refused honest files (25 rules sharing {@code methods: *m}) and did not
 * bound the work (twenty aliases of a list of 100,000 values are two million). Two budgets do:
 *
 * <ul>
 *   <li>a merge key ({@code <<: *defaults}) copies the merged mapping's entries into the mapping
 *       as it is composed: at most {@link #MAX_MERGED_ENTRIES} entries are copied in all;
 *   <li>the tree the rule file stands for, aliases expanded, is counted before it is read, by a walk
 *       that stops as soon as it passes {@link #MAX_TREE_NODES} nodes: the reader visits no more,
 *       and a bomb or a cycle costs the walk no more than that.
 * </ul>
 */
final class BoundedComposer extends Composer {

    /** Far more than 200 rules merging a default of ten keys (2,000); a few milliseconds of copying. */
    static final int MAX_MERGED_ENTRIES = 100_000;

    /**
     * Twice what a 1 MB file can hold written out ({@code [1,1,...]} is about 500,000), so that only
     * aliases can pass it; walked in tens of milliseconds.
     */
    static final int MAX_TREE_NODES = 1_000_000;

    /**
     * The characters of the tree's scalars, aliases expanded: eight times what the largest file
     * holds written out. A scalar is one node however long, so a 300 KB text used through an alias
     * 80,000 times passed the node budget, and reading it ran out of memory (review of the
     * twenty-third round).
     */
    static final long MAX_TREE_CHARS = 8L * ConfigLoader.MAX_FILE_SIZE;

    private long merged;

    BoundedComposer(LoadSettings settings, String text) {
        super(settings, new ParserImpl(settings, new StreamReader(settings, text)));
    }

    /**
     * The stream's one document, as {@code getSingleNode()} gives it, except that empty documents
     * after it are passed over: a file ending in {@code ---} (a generator's habit), with nothing
     * or only a comment after it, was refused as holding a second document (review item L7 of the
     * thirty-third round). A second document with anything in it is refused where it starts.
     */
    Optional<Node> singleDocument() {
        Optional<Node> document = hasNext() ? Optional.of(next()) : Optional.empty();
        while (hasNext()) {
            Event start = parser.peekEvent();
            Node another;
            try {
                another = next();
            } catch (RuntimeException brokenToo) {
                // what is wrong inside a second document matters less than that there is one
                another = null;
            }
            if (!(another instanceof ScalarNode && another.getTag().equals(Tag.NULL)
                    && ((ScalarNode) another).getValue().isEmpty())) {
                throw new ComposerException("expected a single document in the stream",
                        document.flatMap(Node::getStartMark), "but found another document", start.getStartMark());
            }
        }
        return document;
    }

    /**
     * Refuses a second merge key ({@code <<}) in one mapping, as any other key given twice: the
     * parser merged the first and the second together, a key of both taken from one and another
     * dropped, without a word (review of the thirty-third round). Several mappings merge through
     * one key: {@code <<: [*a, *b]}.
     */
    @Override
    protected void composeMappingChildren(List<NodeTuple> children, MappingNode node) {
        super.composeMappingChildren(children, node);
        Node key = children.get(children.size() - 1).getKeyNode();
        if (!key.getTag().equals(Tag.MERGE)) {
            return;
        }
        for (int i = 0; i < children.size() - 1; i++) {
            Node earlier = children.get(i).getKeyNode();
            if (earlier.getTag().equals(Tag.MERGE)) {
                throw new OverBudget(key.getStartMark(), "duplicate key '<<' (first given on line "
                        + earlier.getStartMark().map(mark -> mark.getLine() + 1).orElse(0)
                        + "); merge several mappings with one key: <<: [*a, *b]");
            }
        }
    }

    /** The parser calls this for each mapping a merge key names, before it copies its entries. */
    @Override
    protected MappingNode asMappingNode(Node node) {
        MappingNode mapping = super.asMappingNode(node);
        merged += mapping.getValue().size();
        if (merged > MAX_MERGED_ENTRIES) {
            throw new OverBudget(node.getStartMark(), "the rule file's merge keys (<<) copy more than "
                    + MAX_MERGED_ENTRIES + " entries in all; this mapping is merged too often");
        }
        return mapping;
    }

    /**
     * Throws {@link OverBudget} when {@code root}, read as a tree (each alias expanded), has more than
     * {@link #MAX_TREE_NODES} nodes. The nodes waiting to be counted are never more than that.
     */
    static void checkTreeSize(Node root) {
        Deque<Node> pending = new ArrayDeque<>();
        pending.push(root);
        long counted = 1;
        long chars = 0;
        while (!pending.isEmpty()) {
            Node node = pending.pop();
            if (node instanceof ScalarNode) {
                chars += ((ScalarNode) node).getValue().length();
                if (chars > MAX_TREE_CHARS) {
                    throw new OverBudget(Optional.empty(), "the rule file's values hold more than " + MAX_TREE_CHARS
                            + " characters once its aliases (*name) are expanded; write the values out instead");
                }
            } else if (node instanceof SequenceNode) {
                for (Node item : ((SequenceNode) node).getValue()) {
                    counted = count(counted, 1);
                    pending.push(item);
                }
            } else if (node instanceof MappingNode) {
                for (NodeTuple tuple : ((MappingNode) node).getValue()) {
                    counted = count(counted, 2);
                    pending.push(tuple.getKeyNode());
                    pending.push(tuple.getValueNode());
                }
            }
        }
    }

    private static long count(long counted, int more) {
        if (counted + more > MAX_TREE_NODES) {
            throw new OverBudget(Optional.empty(), "the rule file holds more than " + MAX_TREE_NODES
                    + " values once its aliases (*name) are expanded, or an alias is inside what it names;"
                    + " write the values out instead");
        }
        return counted + more;
    }

    /** A budget passed, or a merge key given twice: what the user is told, and where when that is known. */
    static final class OverBudget extends RuntimeException {
        private static final long serialVersionUID = 1L;

        private final transient Optional<Mark> mark;

        OverBudget(Optional<Mark> mark, String message) {
            super(message, null, false, false);
            this.mark = mark;
        }

        Optional<Mark> mark() {
            return mark;
        }
    }
}
