/** One series of a bar chart: its name in the legend, its colour, and its value for a datum. */
export interface BarSeries<T> {
  name: string
  color: string
  value: (datum: T) => number
}

/**
 * What a bar chart is given (AppBarChart, and its drawing AppBarChartDrawing, which it passes
 * them on to): a bar a datum, stacked when there are several series; `label` names a datum under
 * its bar, at most `ticks` of them; `wholeNumbers` labels only the whole values of the other axis.
 */
export interface BarChartProps<T> {
  data: T[]
  series: BarSeries<T>[]
  label: (datum: T) => string
  ticks?: number
  wholeNumbers?: boolean
}
