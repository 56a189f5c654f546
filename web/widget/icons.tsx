/** The widget's icons (inline SVG, stroke in the current text color). */
const svgProps = {
  viewBox: '0 0 24 24',
  fill: 'none',
  stroke: 'currentColor',
  'stroke-width': 2,
  'stroke-linecap': 'round',
  'stroke-linejoin': 'round',
  'aria-hidden': 'true',
} as const;

export const ChatIcon = () => (
  <svg {...svgProps}>
    <path d="M21 12a8 8 0 0 1-11.6 7.1L4 20.5l1.4-4.9A8 8 0 1 1 21 12z" />
  </svg>
);

export const CloseIcon = () => (
  <svg {...svgProps}>
    <path d="M6 6l12 12M18 6L6 18" />
  </svg>
);

export const NewIcon = () => (
  <svg {...svgProps}>
    <path d="M12 5v14M5 12h14" />
  </svg>
);

export const ThumbUpIcon = () => (
  <svg {...svgProps}>
    <path d="M7 10v11H4V10h3zm0 0l4-7a2 2 0 0 1 2 2v4h5.5a2 2 0 0 1 2 2.3l-1.3 8A2 2 0 0 1 17.2 21H7" />
  </svg>
);

export const ThumbDownIcon = () => (
  <svg {...svgProps}>
    <path d="M17 14V3h3v11h-3zm0 0l-4 7a2 2 0 0 1-2-2v-4H5.5a2 2 0 0 1-2-2.3l1.3-8A2 2 0 0 1 6.8 3H17" />
  </svg>
);
