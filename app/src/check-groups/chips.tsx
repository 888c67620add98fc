/** A list of short words (tags, locations) as chips, or an em dash. */
export function Chips({ items, label }: { items: readonly string[]; label: string }) {
  if (items.length === 0) return <span class="muted">—</span>;
  return (
    <ul class="misc-chips" aria-label={label}>
      {items.map((item) => (
        <li key={item}>{item}</li>
      ))}
    </ul>
  );
}
